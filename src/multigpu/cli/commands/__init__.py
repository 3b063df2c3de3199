"""Sub-commands of the CLI, one module per group.

Each module has ``register(subparsers, add_command)``: it adds its
sub-commands with ``add_command`` (which adds ``--format``) and sets
``handler``, a function of the parsed arguments that returns a dict, a list of
dicts, or ready text.
"""

from multigpu.cli.commands import catalog as _catalog
from multigpu.cli.commands import claims as _claims
from multigpu.cli.commands import collective as _collective
from multigpu.cli.commands import cost as _cost
from multigpu.cli.commands import ep as _ep
from multigpu.cli.commands import models as _models
from multigpu.cli.commands import prices as _prices
from multigpu.cli.commands import recommend as _recommend
from multigpu.cli.commands import report as _report
from multigpu.cli.commands import search as _search
from multigpu.cli.commands import units as _units
from multigpu.cli.commands import validate as _validate
from multigpu.cli.commands import step as _workload

COMMAND_MODULES = [_catalog, _claims, _collective, _cost, _ep, _models, _prices, _recommend, _report, _search, _units, _validate, _workload]
