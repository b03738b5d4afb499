"""The texts a study rests on and the people who work on them: datasets, topics, reference and
peer summaries, annotator accounts and invitations, assignments, and the demo data; their REST
resources (serializers, views, filters, routes).
"""
