"""What a correct store returns, and how a wrong one is told: the reference model of windows and
compaction (:mod:`.model`), the diagnoses of a history that differs (:mod:`.diagnosis`), the
conversations the scenarios append (:mod:`.conversations`), session ids as applications make them and
what mixing two says (:mod:`.identities`, :mod:`.clearing`), and key schemes that carry a namespace
(:mod:`.key_schemes`). It may import the contract and the layers below it."""
