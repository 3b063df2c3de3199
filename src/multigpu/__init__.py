"""multigpu: how GPU interconnects decide the speed and cost of multi-GPU work.

The package is the single model behind every table, figure and number of the
book. Data flows one way: ``data/*.csv`` -> catalog -> topology -> collectives
-> training / inference -> cost -> selection.
"""

__version__ = "0.1.0"
