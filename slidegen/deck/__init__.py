"""The document model every stage meets at: a Deck of Slides of typed, frozen nodes (:mod:`.nodes`).

Besides the node types it holds what is decided about a deck without reading or writing any format: the
one table of layouts (:mod:`.layouts`), the deck's settings and each slide's look, read once
(:mod:`.settings`: ``Deck.settings``, ``Slide.look``), a slide's background and text tone
(:mod:`.background`), clicks and their timeline (:mod:`.clicks`), the box a figure is drawn for
(:mod:`.figbox`), where a link goes (:mod:`.links`), what raw HTML tags mean (:mod:`.rawhtml`,
:mod:`.rawimages`), what raw HTML and fences are, decided once when the deck is read (:mod:`.htmlkinds`: a
``Diagram``, a ``Component``, a ``ComponentBlock``, an ``HtmlRegion``; their pictures' keys, :mod:`.elements`)
and Slidev's built-in components (:mod:`.builtins`). It imports nothing of the other stages.
"""
