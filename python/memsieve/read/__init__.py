"""The read path: search, fusion, versions, rerank and rendering.

``search`` runs a query through the dense and keyword rankings, fuses them
(``fusion``), reranks (``rerank``) and orders versions of one fact newest
first (``versions``); ``render`` turns results into dated prompt lines.
"""
