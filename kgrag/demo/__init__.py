"""Material for the demo and for tests: procedurally drawn images and their captions."""
