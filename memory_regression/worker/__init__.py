"""The worker's side of a run: the pytest plugin in a worker process that binds the store, builds
each scenario's setup and reports its outcome (:mod:`.plugin`), the observation of what the store does
with what it is given before any scenario (:mod:`.observe`, :mod:`.binding_faults`), an outcome said in
store terms (:mod:`.outcomes`) and what is known of the store's Redis clients (:mod:`.clients`). It may
import the harness and every layer below; the harness never imports it."""
