"""The run record's names where `harness.run.pipeline` imports them, until it imports them
from their home (`harness.artifacts.record`): nothing is defined here."""

from harness.artifacts.record import (
    ArtifactRef as ArtifactRef,
)
from harness.artifacts.record import (
    ArtifactSet as ArtifactSet,
)
from harness.artifacts.record import (
    BriefInfo as BriefInfo,
)
from harness.artifacts.record import (
    Interruption as Interruption,
)
from harness.artifacts.record import (
    Outcome as Outcome,
)
from harness.artifacts.record import (
    OutcomeKind as OutcomeKind,
)
from harness.artifacts.record import (
    PreviousJudge as PreviousJudge,
)
from harness.artifacts.record import (
    Receipt as Receipt,
)
from harness.artifacts.record import (
    RefusedWrite as RefusedWrite,
)
from harness.artifacts.record import (
    RunChannels as RunChannels,
)
from harness.artifacts.record import (
    RunRecord as RunRecord,
)
from harness.artifacts.record import (
    Sample as Sample,
)
from harness.artifacts.record import (
    Samples as Samples,
)
from harness.artifacts.record import (
    SessionSummary as SessionSummary,
)
from harness.artifacts.record import (
    TimeShare as TimeShare,
)
from harness.artifacts.record import (
    TimeShares as TimeShares,
)
from harness.artifacts.record import (
    TokenTotals as TokenTotals,
)
from harness.artifacts.record import (
    ToolCallRecord as ToolCallRecord,
)
from harness.artifacts.record import (
    Writes as Writes,
)
