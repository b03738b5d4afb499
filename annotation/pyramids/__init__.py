"""Building a pyramid: SCUs, contributors and their spans, the editing actions, the listing by
tier, autoannotate suggestions from a pyramid, and the inputs of pyramid-construction agreement;
the REST resources of pyramids, SCUs and contributors.
"""
