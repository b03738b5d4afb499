from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.formats.errors import DucViewError
from annotation.peers.ranked_suggestions import study_cases
from annotation.pyramids import suggestion_model


class Command(BaseCommand):
    help = (
        "Train the model that ranks Autoannotate's suggestions, from DUCView .pan files (files or directories, "
        "recursively; .pyr files hold no matches and are skipped) and from this study's finished annotations, "
        "and store it at settings.SUGGESTIONS_MODEL (outside the repository). Each annotator's peers of a topic "
        "teach with that annotator's own earlier matches only."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", help=".pan files or directories")
        parser.add_argument("--no-study", action="store_true", help="leave out the study's finished annotations")
        parser.add_argument("--output", help="where to write the model (default: settings.SUGGESTIONS_MODEL)")

    def handle(self, *args, paths, no_study=False, output=None, **options):
        files: list[Path] = []
        for given in map(Path, paths):
            if given.is_dir():
                files.extend(sorted(p for p in given.rglob("*") if p.suffix.lower() == ".pan"))
            elif given.is_file():
                if given.suffix.lower() == ".pan":
                    files.append(given)
            else:
                raise CommandError(f"{given}: no such file or directory")
        try:
            found = suggestion_model.ducview_cases(files)
        except DucViewError as error:
            raise CommandError(str(error)) from None
        cases = [case for *_, case in found]
        topics = [topic for topic, *_ in found]  # as the files name them (D0601): what a bench checks
        if not no_study:
            for topic, case in study_cases():
                cases.append(case)
                topics.append(f"study:{topic}")
        if not cases:
            raise CommandError("nothing to learn from: give .pan files, or finish annotations in the study")
        try:  # each peer also as its annotator's first of the topic (the pyramid alone)
            model = suggestion_model.fit_each_peer_twice(
                cases,
                topics,
                f"{len(files)} DUCView files, {len(cases) - len(found)} study annotations",
                [str(path.resolve()) for path in files],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        path = suggestion_model.save(model, Path(output) if output else None)
        self.stdout.write(
            f"trained on {len(cases)} peer annotations ({model.trained_on}); threshold {model.threshold:.3f}; "
            f"written to {path}"
        )
