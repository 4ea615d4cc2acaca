"""The run, in the runner's process: the pytest plugin that runs the scenarios on workers and records
what they say (:mod:`.run`, :mod:`.recording`), the verdict decided once from what was recorded
(:mod:`.verdict`), the supervision of the workers and their deadlines (:mod:`.supervisor`), what a run
leaves behind (:mod:`.leftovers`), interrupts, the CI credentials kept from the store, and what runs
before any of it (the project's table, the store's requirements, the spec checked from its source,
UTF-8 mode). It may import every layer below it; only the faces import it."""
