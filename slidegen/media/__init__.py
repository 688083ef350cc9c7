"""What a deck shows that is not its text: figures, components, diagrams, pictures and the bundled assets.

:mod:`.figures` finds the project's figure functions and draws them for the box a slide shows them in
(cached by content: :mod:`.figure_cache`); :mod:`.components` finds the project's web components and
their instances on slides; :mod:`.mermaid` knows the diagrams; :mod:`.images` resolves every picture a
deck names to a file inside the project; :mod:`.assets` is reveal.js, KaTeX, Mermaid and the theme's CSS.
"""
