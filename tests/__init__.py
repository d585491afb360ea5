"""The test suite: one folder per harness package, plus e2e/, adversarial/, packaging/ and
the shared helpers in support/ (imported as `tests.support.…`)."""
