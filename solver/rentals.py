"""Rent or buy, like for like (SPEC §6.3): renting the GPU-hours a design's run needs against the run's
share of owning the design for its economic life (costing.owned.OwnershipCost), and how busy the owned
cluster must be for owning to win against the cheapest committed offer.

For one design and one rental offer of the same GPU and NVLink domain (catalog `rentals:`):

    rented GPUs   G = the job's nodes · GPUs per node            (spares are the provider's business)
    horizon       h = the design's training days · 24 h          (target.train_tokens given)
                    = tco.years · 8,760 h                        (otherwise)
    rent_usd        = G · usd_per_gpu_hour · max(h, commitment_months · 730 h)
    own_usd         = fixed · h / L + energy/h · h               (OwnershipCost: the run's share of the life)
    break-even      against the cheapest committed offer (reserved or capacity block; on-demand only when
                    the catalog has no committed offer for the GPU, and then flagged):
                    busy hours B = fixed / (G · usd_per_gpu_hour − energy/h)
                    owning wins if the cluster is busy ≥ ⌈B / 730⌉ months of its L / 730, ≥ B / L of the time
                    (never, when renting an hour costs no more than the energy of an owned hour, or B > L)
    too large       G > the offer's max_gpus (or DEFAULT_MAX_GPUS): one provider plausibly rents no such block

The offer shown for a run is the cheapest one whose scale-out bandwidth per GPU is at least the design's
(rails × NIC speed ÷ GPUs per node) and whose block is not too large; an offer with a thinner network or
too large a block is listed, flagged, and chosen only when no other offer exists.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .costing import CostedDesign
from .costing.owned import OwnershipCost, ownership_cost
from .inputs.ownership_schema import Ownership
from .inputs.schema import Catalog
from .units import HOURS_PER_MONTH, HOURS_PER_YEAR

COMMITTED_TERMS = ("reserved", "capacity-block")
DEFAULT_MAX_GPUS = 1_536
DEFAULT_MAX_GPUS_SOURCE = ("estimate: Lambda 1-Click Clusters, 16 to over 1,500 GPUs, the largest self-service "
                           "cluster a GPU cloud publishes (docs/sources.md [L9]); a larger block is a private "
                           "contract with one provider")


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
    max_gpus: int = DEFAULT_MAX_GPUS
    max_gpus_source: str = DEFAULT_MAX_GPUS_SOURCE

    @property
    def usd_per_month(self) -> float:
        return self.gpus * self.usd_per_gpu_hour * HOURS_PER_MONTH

    @property
    def committed(self) -> bool:
        return self.term in COMMITTED_TERMS

    @property
    def too_large(self) -> bool:
        """More GPUs than one provider plausibly rents in one block."""
        return self.gpus > self.max_gpus

    def to_dict(self) -> dict:
        return {"offer": self.offer_id, "provider": self.provider, "name": self.offer, "term": self.term,
                "usd_per_gpu_hour": self.usd_per_gpu_hour, "gpus": self.gpus, "hours": self.hours,
                "paid_hours": self.paid_hours, "rent_usd": self.rent_usd, "rent_usd_per_month": self.usd_per_month,
                "network_matches": self.network_matches, "price_is_estimate": self.price_is_estimate,
                "price_source": self.price_source, "price_date": self.price_date,
                "max_gpus": self.max_gpus, "max_gpus_source": self.max_gpus_source, "too_large": self.too_large}


@dataclass(frozen=True)
class BreakEven:
    """How busy the owned cluster must be over its life for owning to cost less than renting its busy
    hours from `quote`: busy hours B = fixed life cost / (rent per hour − energy per hour)."""

    quote: RentQuote
    against_committed: bool  # False: the catalog has no committed offer for this GPU (on-demand used)
    busy_hours: float | None  # None: renting an hour costs no more than its energy
    life_hours: float

    @property
    def months(self) -> int | None:
        """⌈B / 730⌉; None when owning never wins within the life."""
        if self.busy_hours is None or self.busy_hours > self.life_hours + 1e-6:
            return None
        return math.ceil(self.busy_hours / HOURS_PER_MONTH - 1e-9)

    @property
    def utilisation(self) -> float | None:
        """B / L (None: never)."""
        return None if self.months is None or self.busy_hours is None else self.busy_hours / self.life_hours

    @property
    def life_months(self) -> float:
        return self.life_hours / HOURS_PER_MONTH

    def to_dict(self) -> dict:
        return {"offer": self.quote.offer_id, "term": self.quote.term, "usd_per_gpu_hour": self.quote.usd_per_gpu_hour,
                "against_committed": self.against_committed, "busy_hours": self.busy_hours, "months": self.months,
                "life_months": self.life_months, "utilisation": self.utilisation}


def busy_hours_to_break_even(fixed_life_usd: float, rent_usd_per_hour: float, energy_usd_per_hour: float,
                             ) -> float | None:
    """B = fixed / (rent − energy) per hour; None when an hour of renting costs no more than its energy."""
    saving = rent_usd_per_hour - energy_usd_per_hour
    return None if saving <= 0 else fixed_life_usd / saving


@dataclass(frozen=True)
class RentOrBuy:
    """The run's share of owning a design against renting its GPU-hours (the cheapest matching offer first
    in `quotes`)."""

    horizon: str  # "training run" | "tco years"
    hours: float
    capex_usd: float
    tco_usd: float
    owning: OwnershipCost
    quotes: list[RentQuote] = field(default_factory=list)

    @property
    def best(self) -> RentQuote:
        return self.quotes[0]

    @property
    def own_usd(self) -> float:
        """The run's share of owning (OwnershipCost.own_usd)."""
        return self.owning.own_usd

    @property
    def break_even(self) -> BreakEven:
        """Against the cheapest committed offer with a matching network (else any committed, else the
        cheapest offer of any term, flagged)."""
        def price(q: RentQuote) -> tuple:
            return (not q.network_matches, q.too_large, q.usd_per_gpu_hour, q.offer_id)
        committed = sorted((q for q in self.quotes if q.committed), key=price)
        quote = committed[0] if committed else sorted(self.quotes, key=price)[0]
        o = self.owning
        busy = busy_hours_to_break_even(o.fixed_life_usd, quote.gpus * quote.usd_per_gpu_hour, o.energy_usd_per_hour)
        return BreakEven(quote, bool(committed), busy, o.life_hours)

    @property
    def break_even_month(self) -> int | None:
        return self.break_even.months

    @property
    def cheaper(self) -> str:
        return "rent" if self.best.rent_usd < self.own_usd else "buy"

    def flags(self) -> list[str]:
        """What a reader must know: a block too large for one provider, a thinner network, no committed offer."""
        out = [f"{q.offer_id}: {q.gpus:,} GPUs exceed the {q.max_gpus:,} one provider plausibly rents in one "
               f"block ({q.max_gpus_source})" for q in self.quotes if q.too_large]
        return out + self.other_flags()

    def other_flags(self) -> list[str]:
        """The flags other than a too-large block: a thinner network, no committed offer."""
        out: list[str] = []
        if not self.best.network_matches:
            out.append(f"{self.best.offer_id}: a thinner scale-out network than the design's (a longer step)")
        if not self.break_even.against_committed:
            out.append("no committed (reserved or capacity-block) offer for this GPU: break-even against "
                       f"{self.break_even.quote.offer_id} ({self.break_even.quote.term})")
        return out

    def to_dict(self) -> dict:
        return {"horizon": self.horizon, "hours": self.hours, "capex_usd": self.capex_usd, "own_usd": self.own_usd,
                "tco_usd": self.tco_usd, "owning": self.owning.to_dict(),
                "rent_usd": self.best.rent_usd, "offer": self.best.offer_id,
                "break_even": self.break_even.to_dict(), "break_even_month": self.break_even_month,
                "cheaper": self.cheaper, "flags": self.flags(), "quotes": [q.to_dict() for q in self.quotes]}


def rent_or_buy(catalog: Catalog, cost: CostedDesign, nic_speed_gbps: float, train_days: float | None,
                ownership: Ownership | None = None) -> RentOrBuy | None:
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
        offer_gbps = r.rails_per_node * r.nic_speed_gbps / platforms[r.platform].gpus_per_node
        limit = (r.max_gpus, r.max_gpus_source) if r.max_gpus is not None else (DEFAULT_MAX_GPUS, DEFAULT_MAX_GPUS_SOURCE)
        quotes.append(RentQuote(r.id, r.provider, r.offer, r.term, r.usd_per_gpu_hour, gpus, hours, paid,
                                gpus * r.usd_per_gpu_hour * paid, offer_gbps >= need_gbps - 1e-9,
                                r.price_is_estimate, r.price_source, r.price_date, *limit))
    quotes.sort(key=lambda q: (not q.network_matches, q.too_large, q.rent_usd, q.offer_id))
    owning = ownership_cost(ownership or Ownership(), cost.capex_usd, cost.it_power_kw, cost.facility_power_kw,
                            cost.usd_per_kwh, cost.gpus, hours)
    return RentOrBuy(horizon, hours, cost.capex_usd, cost.tco_usd, owning, quotes)


def ranked_options(designs: list) -> list[dict]:
    """`objective: rent_or_buy`: owning each design (the run's share of its life) and renting it (its
    cheapest matching offer) in one list, cheapest over the horizon first; ties keep owning first."""
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
