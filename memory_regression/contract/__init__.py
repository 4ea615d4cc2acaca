"""How a store is found, built and called: the rules (:mod:`.rules`: the parameters, members and
message types), loading and binding a store (:mod:`.loader`, :mod:`.binding`, :mod:`.proposals`,
:mod:`.connection_choice`), calling it whatever its shape (:mod:`.adapter`), what it claims
(:mod:`.capabilities`), model profiles and token counters (:mod:`.profiles`), the frame filter
(:mod:`.frames`), and stores in other languages with their drivers (:mod:`.foreign`,
:mod:`.program_process`, ``drivers/``). It may import the frameworks and the layers below them."""
