"""Performance model of one synchronous training step (SPEC §4): model size and FLOPs (model.py),
layouts and placement (layout.py), the machine (hardware.py), traffic classes (traffic.py),
memory (memory.py) and the step time (step.py)."""
