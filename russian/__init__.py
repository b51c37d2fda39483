"""Russian knowledge shared by the stages that write or read Russian (translate, filter): the
morphology of the vocabulary's words (:mod:`russian.morphology`: cases, numbers, genders, numeral
government, pymorphy3's analyser). Below those stages, above :mod:`assets` and :mod:`ruclevr`;
see docs/architecture.md."""
