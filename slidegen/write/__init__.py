"""The writers: a bound Deck (and its resolved media) to each output format, reading nothing but the Deck.

:mod:`.html` (reveal.js through jinja2 templates; clicks as fragments: :mod:`.html_clicks`; code colours:
:mod:`.highlight`; one self-contained file: :mod:`.singlefile`), :mod:`.pptx` (a pure presentation model,
then python-pptx), :mod:`.markdown` (Slidev and Marp Markdown), :mod:`.pdf` and :mod:`.png` (the HTML
printed or photographed by Chromium). PowerPoint's pictures of what it cannot draw natively (components,
diagrams, HTML blocks) are drawn by Chromium too: :mod:`.picture_jobs`, :mod:`.htmlpictures`,
:mod:`.snapshot`. No writer imports :mod:`slidegen.read`.
"""
