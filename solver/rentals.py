"""Rent or buy (SPEC §6.2, Rentals v3): renting the same GPU-hours a design's run needs, next to
owning the design, and the month from which owning is cheaper.

For one design and one rental offer of the same GPU and NVLink domain (catalog `rentals:`):

    rented GPUs   G = the job's nodes · GPUs per node            (spares are the provider's business)
    horizon       H = the design's training days · 24 h          (target.train_tokens given)
                    = tco.years · 8,760 h                        (otherwise)
    rent_usd        = G · usd_per_gpu_hour · max(H, commitment_months · 730 h)
    own_usd         = capex + energy for H                      (= TCO when H is the TCO years)
    break-even month = ⌈capex / ((G · usd_per_gpu_hour − facility kW · $/kWh) · 730 h)⌉
                      (never, when renting an hour costs no more than the energy of an owned hour)

Energy uses costing.energy_usd, the same formula as the TCO. The offer shown for a design is the
cheapest one whose scale-out bandwidth per GPU is at least the design's (rails × NIC speed ÷ GPUs per node); an offer with a
thinner network is listed, flagged, and chosen only when no other offer exists (the step time would
be longer than the design's).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .costing import HOURS_PER_YEAR, CostedDesign, energy_usd
from .inputs.schema import Catalog

HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0  # 730 h


@dataclass(frozen=True)
class RentQuote:
    """One rental offer priced for one design's GPU-hours."""

    offer_id: str
    provider: str
    offer: str
    term: str
    usd_per_gpu_hour: float
    gpus: int
    hours: float  # the run (or the TCO years), h
    paid_hours: float  # max(hours, commitment), h
    rent_usd: float
    network_matches: bool  # the offer's scale-out bandwidth per node ≥ the design's
    price_is_estimate: bool
    price_source: str
    price_date: str

    @property
    def usd_per_month(self) -> float:
        return self.gpus * self.usd_per_gpu_hour * HOURS_PER_MONTH

    def to_dict(self) -> dict:
        return {"offer": self.offer_id, "provider": self.provider, "name": self.offer, "term": self.term,
                "usd_per_gpu_hour": self.usd_per_gpu_hour, "gpus": self.gpus, "hours": self.hours,
                "paid_hours": self.paid_hours, "rent_usd": self.rent_usd, "rent_usd_per_month": self.usd_per_month,
                "network_matches": self.network_matches, "price_is_estimate": self.price_is_estimate,
                "price_source": self.price_source, "price_date": self.price_date}


@dataclass(frozen=True)
class RentOrBuy:
    """Owning a design against renting its GPU-hours (the cheapest matching offer first in `quotes`)."""

    horizon: str  # "training run" | "tco years"
    hours: float
    capex_usd: float
    own_usd: float  # capex + energy for the horizon
    tco_usd: float
    energy_usd_per_month: float
    quotes: list[RentQuote] = field(default_factory=list)

    @property
    def best(self) -> RentQuote:
        return self.quotes[0]

    @property
    def break_even_month(self) -> int | None:
        """The first month after which owning has cost less than renting (None: renting stays cheaper)."""
        return break_even_month(self.capex_usd, self.best.usd_per_month, self.energy_usd_per_month)

    @property
    def cheaper(self) -> str:
        return "rent" if self.best.rent_usd < self.own_usd else "buy"

    def to_dict(self) -> dict:
        return {"horizon": self.horizon, "hours": self.hours, "capex_usd": self.capex_usd, "own_usd": self.own_usd,
                "tco_usd": self.tco_usd, "energy_usd_per_month": self.energy_usd_per_month,
                "rent_usd": self.best.rent_usd, "offer": self.best.offer_id, "break_even_month": self.break_even_month,
                "cheaper": self.cheaper, "quotes": [q.to_dict() for q in self.quotes]}


def break_even_month(capex_usd: float, rent_usd_per_month: float, energy_usd_per_month: float) -> int | None:
    """⌈capex / (rent − energy per month)⌉; None when a month of renting costs no more than its energy."""
    saving = rent_usd_per_month - energy_usd_per_month
    if saving <= 0:
        return None
    return math.ceil(capex_usd / saving - 1e-9)


def rent_or_buy(catalog: Catalog, cost: CostedDesign, nic_speed_gbps: float, train_days: float | None,
                ) -> RentOrBuy | None:
    """The rent-or-buy comparison of one costed design; None when no offer rents its GPU and domain."""
    platforms = catalog.by_id("platforms")
    mine = platforms[cost.platform]
    offers = [r for r in catalog.rentals if r.platform in platforms
              and platforms[r.platform].gpu == mine.gpu
              and platforms[r.platform].gpus_per_domain == mine.gpus_per_domain]
    if not offers:
        return None
    horizon, hours = (("training run", train_days * 24.0) if train_days is not None
                      else ("tco years", cost.tco_years * HOURS_PER_YEAR))
    gpus = cost.job_nodes * mine.gpus_per_node
    need_gbps = cost.rails_per_node * nic_speed_gbps / mine.gpus_per_node  # scale-out Gb/s per GPU
    quotes = []
    for r in offers:
        paid = max(hours, r.commitment_months * HOURS_PER_MONTH)
        offer_gbps = r.nics_per_node * r.nic_speed_gbps / platforms[r.platform].gpus_per_node
        quotes.append(RentQuote(r.id, r.provider, r.offer, r.term, r.usd_per_gpu_hour, gpus, hours, paid,
                                gpus * r.usd_per_gpu_hour * paid, offer_gbps >= need_gbps - 1e-9,
                                r.price_is_estimate, r.price_source, r.price_date))
    quotes.sort(key=lambda q: (not q.network_matches, q.rent_usd, q.offer_id))
    energy_h = energy_usd(cost.facility_power_kw, 1.0 / HOURS_PER_YEAR, cost.usd_per_kwh)
    return RentOrBuy(horizon, hours, cost.capex_usd, cost.capex_usd + energy_h * hours, cost.tco_usd,
                     energy_h * HOURS_PER_MONTH, quotes)


def ranked_options(designs: list) -> list[dict]:
    """`objective: rent_or_buy`: owning each design and renting it (its cheapest matching offer) in
    one list, cheapest over the horizon first; ties keep owning first."""
    options = []
    for d in designs:
        rb = d.rent
        own = rb.own_usd if rb is not None else d.cost.tco_usd
        options.append({"choice": "buy", "design_rank": d.rank, "cost_usd": own, "offer": None})
        if rb is not None:
            options.append({"choice": "rent", "design_rank": d.rank, "cost_usd": rb.best.rent_usd,
                            "offer": rb.best.offer_id, "network_matches": rb.best.network_matches})
    options.sort(key=lambda o: (round(o["cost_usd"], 2), o["choice"] != "buy", o["design_rank"]))
    for i, o in enumerate(options, start=1):
        o["rank"] = i
    return options
