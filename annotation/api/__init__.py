"""The REST API's shared plumbing, below every concept and importing none: the base viewset and
serializers (``viewsets``, ``serializers``, ``filters``), the access rule as they apply it
(``access``, registered by ``annotation.access``), versions (ETag, If-Match), ``Idempotency-Key``
and its table, throttles, renderers, download names, query choices. Each concept's REST code
(serializers, views, filters, routes) lives in its own package; the router is assembled in
``pyramid_app/api_urls.py``.
"""
