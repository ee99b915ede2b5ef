"""The read path: search, rank, fusion, rerank, versions and rendering.

``search`` runs a query down one line of stages: the candidates and their
dense or keyword ranking (``rank``, fused by ``fusion``), a rerank
(``rerank``), and the versions of one fact newest first (``versions``, also
the home of the one "newer version of" rule); ``render`` turns results into
dated prompt lines.
"""
