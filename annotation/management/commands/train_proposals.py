from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.formats.errors import DucViewError
from annotation.pyramids import proposal_training, proposals


class Command(BaseCommand):
    help = (
        "Train the model of the pyramid builder's proposals (issue 30) from DUCView .pyr files (files or "
        "directories, recursively) and from this study's finished pyramids, and store it at "
        "settings.PROPOSALS_MODEL (outside the repository). The blind rule: no pyramid of a topic the study is "
        "still building is learnt from, and the model is never used for references it learnt from."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", help=".pyr files or directories")
        parser.add_argument("--no-study", action="store_true", help="leave out the study's finished pyramids")
        parser.add_argument("--output", help="where to write the model (default: settings.PROPOSALS_MODEL)")

    def handle(self, *args, paths, no_study=False, output=None, **options):
        files: list[Path] = []
        for given in map(Path, paths):
            if given.is_dir():
                files.extend(proposal_training.pyramid_files(given))
            elif given.is_file():
                files.append(given)
            else:
                raise CommandError(f"{given}: no such file or directory")
        try:
            found = [proposal_training.from_pyr(path) for path in files]
        except DucViewError as error:
            raise CommandError(str(error)) from None
        if not no_study:
            found += proposal_training.study_pyramids()
        building = {
            p.fingerprint for status in ("draft", "in_progress") for p in proposal_training.study_pyramids(status)
        }
        chosen = proposal_training.training_selection(found, building)
        if not chosen:
            raise CommandError("nothing to learn from: give .pyr files, or finish pyramids in the study")
        try:
            model = proposal_training.fit(chosen)
        except ValueError as error:
            raise CommandError(str(error)) from None
        path = proposals.save_model(model, Path(output) if output else None)
        self.stdout.write(
            f"trained on {len(chosen)} pyramids ({len(found) - len(chosen)} left out: topics being built); "
            f"thresholds: contributor {model.contributor_threshold:.3f}, pair {model.pair_threshold:.3f}; "
            f"written to {path}"
        )
        for source in model.trained_on:
            self.stdout.write(f"  {source}")
