"""Adjudication: a coordinator settles where the annotators of one peer disagree (INCEpTION's
curation mode, for peer annotations) and saves an adjudicated version that scores then rest on;
an annotator carries their matches over to an adjudicated pyramid (also through the API)."""
