"""Helpers shared by the tests: fakes at the SDK boundary, loopback API servers, sealed
artifacts, session builders, hostile inputs. Imported as `from tests.support.fakes import …`;
no test lives here."""
