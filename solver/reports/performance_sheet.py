"""The workbook's Performance sheet (docs/workbook.md): the step-time breakdown, bytes, memory and margins."""
from __future__ import annotations

from openpyxl.chart import BarChart, Reference
from openpyxl.worksheet.pagebreak import Break

from ..perf.traffic import CLASS_NAMES
from .goodput_sheet import write_goodput_table
from .summary_sheet import design_name
from .xlsx import (
    BOLD,
    GB,
    NUMBER_2,
    PERCENT,
    RIGHT,
    SECONDS,
    col_letter,
    formula,
    header_row,
    note,
    print_setup,
    put,
    section_row,
    style_chart,
    text_categories,
    wrap,
    write_title,
)

TERMS = ("compute", "bubble", *CLASS_NAMES, "capacity")  # the step-time breakdown: compute, bubble, each class exposed, link capacity


def write_performance_sheet(wb, result) -> None:
    """Step-time breakdown per design (stacked chart), bytes per GPU, memory per GPU, MFU.

    The columns follow the traffic-class registry (solver/perf/traffic.py): one per class.
    """
    ws = wb.create_sheet("Performance")
    write_title(ws, f"Performance per design (one training step; software stack {result.stack})")
    note(ws, 2, "Model outputs (seconds, bytes, GB): prices do not change them; solve again to change them.")
    designs = result.designs
    head = 4
    labels = ["Design", "Compute (s)", "Bubble (s)"] + [f"{k.upper()} exposed (s)" for k in CLASS_NAMES] \
        + ["Link capacity (s)", "Step time (s)", "Target (s)", "MFU"]
    header_row(ws, head, labels, right=range(2, len(labels) + 1), height=48)  # "DP_RS exposed (s)": 3 lines of 9
    after = 2 + len(TERMS)  # first column after the breakdown
    for i, d in enumerate(designs):
        row = head + 1 + i
        p = d.perf
        put(ws, row, 1, design_name(d))
        for j, value in enumerate(p.breakdown_s()[t] for t in TERMS):
            put(ws, row, 2 + j, value, SECONDS)
        put(ws, row, after, p.step_time_s, SECONDS)
        put(ws, row, after + 1, d.target_step_time_s, SECONDS)
        put(ws, row, after + 2, p.mfu, PERCENT)
    last = head + len(designs)
    ws.freeze_panes = f"B{head + 1}"
    chart_rows = 0
    if designs:
        ws.add_chart(_breakdown_chart(ws, head, last), f"A{last + 2}")
        chart_rows = 20  # 10 cm of 0.53 cm rows
    row = last + 4 + chart_rows
    if designs:
        ws.row_breaks.append(Break(id=row - 2))
    row = _bytes_table(ws, designs, row)
    _memory_table(ws, designs, row + len(designs) + 3)
    ws.column_dimensions["A"].width = 24
    for col in range(2, 3 + 2 * len(CLASS_NAMES) + 2):
        ws.column_dimensions[col_letter(col)].width = 9  # five traffic classes × two networks fit one page at ≥ 80 %
    ws.column_dimensions[col_letter(5 + len(CLASS_NAMES))].width = 12  # the margins table's wrapped coverage text
    print_setup(ws)  # no repeated header: the second page holds other tables


def _breakdown_chart(ws, head: int, last: int) -> BarChart:
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    chart.add_data(Reference(ws, min_col=2, max_col=1 + len(TERMS), min_row=head, max_row=last), titles_from_data=True)
    text_categories(chart, ws.title, f"$A${head + 1}:$A${last}")
    style_chart(chart, "Step time breakdown", "design", "seconds per step")
    chart.y_axis.scaling.min = 0
    chart.legend.position = "r"
    chart.height, chart.width = 10, 22
    return chart


def _bytes_table(ws, designs: list, row: int) -> int:
    section_row(ws, row - 1, "Bytes per GPU per step (GB)")
    # the classes that move bytes in some design (a dense model's ep moves none): the table fits the page
    classes = [k for k in CLASS_NAMES if any(d.perf.traffic[k].nvlink_bytes or d.perf.traffic[k].scaleout_bytes
                                             for d in designs)]
    labels = ["Design"] + [f"{k.upper()} {net} (GB)" for k in classes for net in ("NVLink", "scale-out")] \
        + ["NVLink total (GB)", "Scale-out total (GB)"]
    header_row(ws, row, labels, right=range(2, len(labels) + 1), height=48)  # "DP_RS scale-out (GB)": 3 lines
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        values = [b for k in classes for b in (p.traffic[k].nvlink_bytes, p.traffic[k].scaleout_bytes)]
        values += [p.nvlink_bytes, p.scaleout_bytes]
        for j, v in enumerate(values):
            put(ws, r, 2 + j, v / 1e9, GB)
    return row


def _memory_table(ws, designs: list, row: int) -> None:
    section_row(ws, row - 1, "Memory per GPU (GB)")
    labels = ["Design", "Weights, grads, optimizer (GB)", "Activations (GB)", "Total per GPU (GB)",
              "Usable HBM (GB)", "Fits in HBM", "HBM used", "Hardware TFLOP/s per GPU", "MFU"]
    header_row(ws, row, labels, right=(2, 3, 4, 5, 6, 7, 8, 9), height=48)
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        put(ws, r, 2, p.memory_states_gb, GB)
        put(ws, r, 3, p.memory_activations_gb, GB)
        put(ws, r, 4, p.memory_per_gpu_gb, GB)
        put(ws, r, 5, p.hbm_usable_gb, GB)
        put(ws, r, 6, "yes" if p.fits_memory else "NO").alignment = RIGHT
        formula(ws, r, 7, f"=D{r}/E{r}", PERCENT, p.memory_per_gpu_gb / p.hbm_usable_gb)
        put(ws, r, 8, p.hardware_tflops_per_gpu, NUMBER_2)
        put(ws, r, 9, p.mfu, PERCENT)
    write_margins_table(ws, row + len(designs) + 3, designs)
    goodput = row + 2 * len(designs) + 6
    if designs:  # the goodput table prints on a page of its own, its title with it (not left at the foot of page 2)
        ws.row_breaks.append(Break(id=goodput - 2))
    write_goodput_table(ws, goodput, designs)


def write_margins_table(ws, row: int, designs) -> None:
    """Per design: slack to the target, the largest compute slowdown and scale-out bandwidth derate it survives,
    each class's overlap window, and the regimes no calibration row covers (perf.coverage)."""
    put(ws, row - 1, 1, "Margins, overlap windows and calibration coverage").font = BOLD
    header_row(ws, row, ["Design", "Slack to target", "Compute slowdown survived", "Bandwidth derate survived"]
            + [f"{k.upper()} window (s)" for k in CLASS_NAMES] + ["Uncalibrated regimes and caveats"])
    for i, d in enumerate(designs):
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        m = d.margins or {}
        for j, key in enumerate(("slack_fraction", "compute_slowdown", "bandwidth_derate")):
            put(ws, r, 2 + j, m.get(key, 0.0), PERCENT)
        for j, k in enumerate(CLASS_NAMES):
            put(ws, r, 5 + j, d.perf.traffic[k].window_s, SECONDS)
        flags = list(d.uncalibrated) + list(d.caveats)
        put(ws, r, 5 + len(CLASS_NAMES), "; ".join(flags) if flags else "none")
        wrap(ws, r, 5 + len(CLASS_NAMES), 12)  # long text wraps in its column instead of widening the page
