"""Sub-commands of the CLI, one module per group.

Each module has ``register(subparsers, add_command)``: it adds its
sub-commands with ``add_command`` (which adds ``--format``) and sets
``handler``, a function of the parsed arguments that returns a dict, a list of
dicts, or ready text.
"""

from multigpu.commands import catalog as _catalog
from multigpu.commands import claims as _claims
from multigpu.commands import collective as _collective
from multigpu.commands import cost as _cost
from multigpu.commands import prices as _prices
from multigpu.commands import recommend as _recommend
from multigpu.commands import search as _search
from multigpu.commands import units as _units
from multigpu.commands import workload as _workload

COMMAND_MODULES = [_catalog, _claims, _collective, _cost, _prices, _recommend, _search, _units, _workload]
