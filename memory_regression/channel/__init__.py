"""What crosses between the runner and its workers: the typed messages a worker sends over the
runner's socket (:mod:`.messages`), and the call page on which a worker shows the store call in
progress (:mod:`.call_page`). It imports nothing else of the package, so that both ends share it."""
