"""What a run found and the files that say it: the results (:mod:`.results`), what a worker adds to
pytest's report of a phase (:mod:`.phase_report`), the figures (:mod:`.figures`), the comparison with
a baseline and the baseline file (:mod:`.baseline`, :mod:`.baseline_file`), the report files
(:mod:`.files`), their text and HTML renderings (:mod:`.renderings`, :mod:`.html_report`) and
GitHub's side (:mod:`.github`). It may import the reference model, the contract and the layers
below; never the harness."""
