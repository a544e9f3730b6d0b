"""Write this task's twelve daily logs, and work out which orders they leave stuck.

    python lab/tasks/long-task/make_logs.py   # rewrites v4_memory/demo/workspace/logs

The logs are an order pipeline's: orders placed, paid, packed, shipped, cancelled,
told by several services in their own words, among health checks and metrics, with
notes from the person on call.  An order is *stuck* when it was paid for and, by the
end of the last day, neither shipped nor cancelled.  Some orders ship a day or two
after they were paid, some are paid only after a declined card, some are cancelled
after payment, and a few get stuck: the answer needs every day read and remembered.

What is written follows from a seed.  The demo's logs, in the repository, are those
of SEED, so running this again rewrites the same files (the test suite checks that it
does), and every scripted cassette reads them.  A live run of the lab gets logs of a
fresh seed (`make` in check.py), which only the lab knows: their answer is in no file.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20240304
DAYS = 12
ORDERS_PER_DAY = 26
HERE = Path(__file__).resolve().parent
LOGS = HERE.parents[2] / "v4_memory" / "demo" / "workspace" / "logs"  # chapter 4's demo, too
CARRIERS = ["DHL", "UPS", "GLS", "DPD"]
CHANNELS = ["the web shop", "the mobile app", "a phone order", "the B2B portal"]
# What happens to an order, and how often: the ordinary path first.
FATES = {
    "ships": 62,
    "ships later": 10,  # the carrier missed a pickup: it leaves on a later day
    "declined": 7,  # the card is refused and the customer gives up: never paid
    "paid after retry": 6,
    "cancelled": 5,
    "cancelled after payment": 4,
    "held then shipped": 3,
    "stuck packed": 1,  # packed, then nothing: stuck
    "stuck held": 1,  # put on hold, never released: stuck
    "stuck paid": 1,  # paid after a retry, never picked: stuck
}


@dataclass
class Day:
    """One day's log lines, and what happened to which order, as the lines say."""

    number: int
    lines: list[tuple[int, str]] = field(default_factory=list)  # (seconds after midnight, text)
    events: list[tuple[str, str]] = field(default_factory=list)  # (order, paid|shipped|cancelled)

    def log(self, second: int, service: str, text: str, order: str = "", event: str = "") -> None:
        self.lines.append((second, f"{service:<10} {text}"))
        if event:
            self.events.append((order, event))

    def text(self) -> str:
        rows = [
            f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d} {t}" for s, t in sorted(self.lines)
        ]
        return "\n".join(rows) + "\n"


def money(rng: random.Random) -> str:
    return f"{rng.randint(800, 24000) / 100:.2f}"


def placed(day: Day, rng: random.Random, order: str, at: int) -> None:
    amount, count = money(rng), rng.randint(1, 6)
    items = f"{count} item{'s' if count > 1 else ''}"
    customer = f"C-{rng.randint(100, 999)}"
    day.log(
        at,
        *rng.choice(
            [
                ("orders", f"new order {order} from customer {customer}: {items}, {amount} EUR"),
                ("orders", f"{order} created via {rng.choice(CHANNELS)} ({items})"),
                ("web", f"checkout completed, order {order}, basket {amount} EUR"),
            ]
        ),
    )


def paid(day: Day, rng: random.Random, order: str, at: int, retries: int = 0) -> None:
    if retries:
        text = f"{order}: charge ok after {retries} retry(s)"
    else:
        method = rng.choice(["card", "PayPal", "SEPA"])
        text = rng.choice(
            [f"{order} captured ({method})", f"payment for {order} authorised and settled"]
        )
    day.log(at, "payments", text, order, "paid")


def packed(day: Day, rng: random.Random, order: str, at: int) -> None:
    day.log(at, "warehouse", f"picked and packed {order} at station {rng.randint(1, 9)}")


def shipped(day: Day, rng: random.Random, order: str, at: int, carrier: str = "") -> None:
    carrier = carrier or rng.choice(CARRIERS)
    tracking = f"{carrier[:2]}{rng.randint(10**9, 10**10 - 1)}"
    service, text = rng.choice(
        [
            ("shipping", f"{order} handed to {carrier}, tracking {tracking}"),
            ("warehouse", f"{order} left the dock on the {carrier} truck"),
            ("shipping", f"label {tracking} scanned by the {carrier} driver ({order})"),
        ]
    )
    day.log(at, service, text, order, "shipped")


def cancelled(day: Day, rng: random.Random, order: str, at: int, refund: bool) -> None:
    if refund:
        text = f"refund issued for {order}: the customer called the order off"
        day.log(at, "support", text, order, "cancelled")
    else:
        text = f"{order} cancelled by the customer before packing"
        day.log(at, "orders", text, order, "cancelled")


def noise(day: Day, rng: random.Random) -> None:
    """What a real log is mostly made of: nothing about the question."""
    for hour in range(6, 22):
        at = hour * 3600 + rng.randint(0, 300)
        day.log(
            at,
            "health",
            f"all checks green (db {rng.randint(4, 30)} ms, queue depth {rng.randint(0, 9)})",
        )
        if hour % 2:
            rate = rng.randint(880, 990) / 10
            day.log(at + 1200, "cache", f"hit rate {rate} %, {rng.randint(200, 900)} keys evicted")
        if hour % 3 == 0:
            p95 = rng.randint(250, 900)
            day.log(at + 2400, "metrics", f"p95 checkout latency {p95} ms over the last hour")
        if hour % 2 == 0:
            logins = rng.randint(20, 90)
            day.log(at + 600, "auth", f"{logins} logins, {rng.randint(0, 2)} lockouts, 0 resets")
        if hour % 4 == 1:
            sent = rng.randint(5, 40)
            day.log(at + 3000, "mail", f"sent {sent} order confirmations, 0 bounced")


def generate(seed: int = SEED) -> tuple[dict[str, str], list[str]]:
    """The log files by name, and the stuck orders, sorted."""
    rng = random.Random(seed)
    days = [Day(n) for n in range(1, DAYS + 1)]
    number = 1000
    for day in days:
        noise(day, rng)
        day.log(6 * 3600, "deploy", f"web 2024.3.{day.number}-1 rolled out, 0 errors")
        for at in sorted(rng.randint(7 * 3600, 17 * 3600) for _ in range(ORDERS_PER_DAY)):
            number += 1
            order = f"A-{number}"
            fate = rng.choices(list(FATES), weights=list(FATES.values()))[0]
            if day.number == DAYS and fate in ("ships later", "held then shipped"):
                fate = "ships"  # the last day has no later day to ship on
            follow(fate, order, at, day, days, rng)
        day.log(21 * 3600 + 1800, "note", f"(on-call) day {day.number} closed, handing over")
    files = {f"day-{day.number:02d}.log": day.text() for day in days}
    return files, stuck_orders(days)


def stuck_orders(days: list[Day]) -> list[str]:
    """Paid, and neither shipped nor cancelled: read from what the logs say, not from the plan."""
    happened: dict[str, set[str]] = {}
    for day in days:
        for order, event in day.events:
            happened.setdefault(order, set()).add(event)
    return sorted(order for order, events in happened.items() if events == {"paid"})


def follow(fate: str, order: str, at: int, day: Day, days: list[Day], rng: random.Random) -> None:
    """Log what happens to one order, on its day and, for some, on the days after."""
    placed(day, rng, order, at)
    at += rng.randint(20, 600)
    if fate in ("declined", "paid after retry", "stuck paid"):
        reason = rng.choice(["insufficient funds", "card expired", "3-D Secure failed"])
        day.log(at, "payments", f"{order}: card declined ({reason})")
        if fate == "declined":
            return
        at += rng.randint(300, 1800)
        paid(day, rng, order, at, retries=rng.randint(1, 3))
        if fate == "stuck paid":
            return
    elif fate == "cancelled":
        cancelled(day, rng, order, at + rng.randint(60, 900), refund=False)
        return
    else:
        paid(day, rng, order, at)
    at += rng.randint(600, 3600)
    packed(day, rng, order, at)
    later = days[day.number : day.number + 2] or [day]
    if fate == "ships later":
        carrier = rng.choice(CARRIERS)
        day.log(
            19 * 3600,
            "note",
            f"(on-call) {carrier} missed the evening pickup; {order} waits for the next truck",
        )
        shipped(rng.choice(later), rng, order, rng.randint(8 * 3600, 11 * 3600), carrier)
    elif fate in ("held then shipped", "stuck held"):
        day.log(
            at + 60, "note", f"(on-call) {order} is on hold until the customer confirms the address"
        )
        if fate == "held then shipped":
            release = rng.choice(later)
            release.log(9 * 3600, "support", f"address for {order} confirmed, released to shipping")
            shipped(release, rng, order, rng.randint(10 * 3600, 12 * 3600))
    elif fate == "cancelled after payment":
        cancelled(day, rng, order, at + rng.randint(60, 900), refund=True)
    elif fate in ("ships", "paid after retry"):
        shipped(day, rng, order, min(at + rng.randint(600, 7200), 20 * 3600))


def write_logs(logs: Path, seed: int = SEED) -> list[str]:
    """Write the logs of `seed` into the folder `logs`; return the stuck orders."""
    files, stuck = generate(seed)
    logs.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (logs / name).write_text(text, encoding="utf-8")
    return stuck


def main() -> int:
    stuck = write_logs(LOGS)
    print(f"wrote {DAYS} logs, in which {len(stuck)} orders are stuck", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
