#!/usr/bin/env python3
"""Turns the raw lines of scripts/bench.sh into the results: ratios, targets, a table, JSON and Markdown.

Every ratio divides two figures measured in the same run on the same machine. Run by scripts/bench.sh; it only
reads the raw JSON lines (one per measurement) and writes the summary.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = ""
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release(), "commit": commit}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("raw")
    parser.add_argument("--json", required=True)
    parser.add_argument("--markdown", required=True)
    args = parser.parse_args()
    lines = [json.loads(line) for line in open(args.raw) if line.strip()]

    def first(name):
        return next(line for line in lines if line.get("figure") == name)

    def every(name):
        return [line for line in lines if line.get("figure") == name]

    def best_of(name, which):
        """The fastest per wall second of the rounds that `which` picks."""
        return max((line for line in every(name) if which(line)), key=lambda line: line["readings_per_wall_second"])

    def best(name, key):
        """The fastest of the rounds: other work on a shared machine only ever slows a run down."""
        return max(every(name), key=key)

    engine = best("engine", lambda line: line["readings_per_cpu_second"])
    scipy = best("scipy_trilateration", lambda line: line["solves_per_cpu_second"])
    single = best_of("engine_workers", lambda line: line["workers"] == 1)
    parallel = best_of("engine_workers", lambda line: line["workers"] > 1)
    grid = best("engine_grid", lambda line: line["readings_per_cpu_second"])
    grid_large = first("engine_grid_10000")
    engine_small = best("engine_100", lambda line: line["readings_per_cpu_second"])
    engine_large = best("engine_10000", lambda line: line["readings_per_cpu_second"])
    decode = best("decode", lambda line: line["events_per_cpu_second"])
    reference = best("bluetooth_data_tools_decode", lambda line: line["cached"]["events_per_cpu_second"])
    reference_uncached = best("bluetooth_data_tools_decode", lambda line: line["uncached"]["events_per_cpu_second"])
    latency = first("latency")
    realtime = first("latency_10000")
    realtime_trilateration = first("latency_10000_trilateration")
    agent = first("agent")
    agent_source = first("agent_source")
    scale = first("scale")
    loop = best("loop", lambda line: line["loop_readings_per_cpu_second"])
    ceilings = [line["readings"] / (line["end"] - line["start"]) for line in every("ceiling")]
    locators = [line["readings_per_second"] for line in every("locator")]

    readings_per_solve = engine["readings_per_solve"]
    scipy_readings = scipy["solves_per_cpu_second"] * readings_per_solve
    figures = {
        "engine_readings_per_cpu_second": engine["readings_per_cpu_second"],
        "engine_solves_per_cpu_second": engine["solves_per_cpu_second"],
        "readings_per_solve": readings_per_solve,
        "scipy_solves_per_cpu_second": scipy["solves_per_cpu_second"],
        "scipy_readings_per_cpu_second": scipy_readings,
        "engine_vs_scipy_solves": engine["solves_per_cpu_second"] / scipy["solves_per_cpu_second"],
        "engine_vs_scipy_readings": engine["readings_per_cpu_second"] / scipy_readings,
        "engine_median_error_m": engine["median_error_m"],
        "scipy_median_error_m": scipy["median_error_m"],
        "engine_one_worker_readings_per_wall_second": single["readings_per_wall_second"],
        "engine_workers": parallel["workers"],
        "engine_workers_readings_per_wall_second": parallel["readings_per_wall_second"],
        "engine_workers_speedup": parallel["readings_per_wall_second"] / single["readings_per_wall_second"],
        "grid_readings_per_cpu_second": grid["readings_per_cpu_second"],
        "grid_median_error_m": grid["median_error_m"],
        "grid_vs_trilateration": grid["readings_per_cpu_second"] / engine["readings_per_cpu_second"],
        "grid_10000_tags_vmhwm_mb": grid_large["vmhwm_kb"] / 1024,
        "grid_10000_tags_readings_per_cpu_second": grid_large["readings_per_cpu_second"],
        "engine_readings_per_cpu_second_100_tags": engine_small["readings_per_cpu_second"],
        "engine_readings_per_cpu_second_10000_tags": engine_large["readings_per_cpu_second"],
        "cost_per_reading_10000_vs_100_tags": engine_small["readings_per_cpu_second"]
        / engine_large["readings_per_cpu_second"],
        "broker_ceiling_readings_per_second": max(ceilings),
        "locator_readings_per_second": max(locators),
        "locator_share_of_ceiling": max(locators) / max(ceilings),
        "latency_p50_ms": latency["p50_ms"],
        "latency_p99_ms": latency["p99_ms"],
        "latency_samples": latency["samples"],
        "latency_load_readings_per_second": latency["readings_per_second"],
        "latency_p50_batch_to_decision_ms": latency["p50_to_decision_ms"],
        "latency_p50_decision_to_arrival_ms": latency["p50_decision_to_arrival_ms"],
        "realtime_10000_readings_per_second": realtime["readings_per_second"],
        "realtime_10000_p50_ms": realtime["p50_ms"],
        "realtime_10000_p99_ms": realtime["p99_ms"],
        "realtime_10000_samples": realtime["samples"],
        "realtime_10000_locator_share_of_cores": realtime["locator_cpu_share_of_cores"],
        "realtime_10000_locator_cpu_us_per_reading": realtime["locator_cpu_us_per_reading"],
        "realtime_10000_headroom": 1 / max(realtime["locator_cpu_share_of_cores"], 1e-9),
        "realtime_10000_trilateration_p50_ms": realtime_trilateration["p50_ms"],
        "realtime_10000_trilateration_p99_ms": realtime_trilateration["p99_ms"],
        "realtime_10000_trilateration_samples": realtime_trilateration["samples"],
        "realtime_10000_trilateration_locator_share_of_cores": realtime_trilateration["locator_cpu_share_of_cores"],
        "realtime_10000_trilateration_locator_cpu_us_per_reading": realtime_trilateration["locator_cpu_us_per_reading"],
        "realtime_10000_trilateration_headroom": 1 / max(realtime_trilateration["locator_cpu_share_of_cores"], 1e-9),
        "decode_events_per_cpu_second": decode["events_per_cpu_second"],
        "bdt_events_per_cpu_second": reference["cached"]["events_per_cpu_second"],
        "bdt_uncached_events_per_cpu_second": reference_uncached["uncached"]["events_per_cpu_second"],
        "decode_vs_bdt": decode["events_per_cpu_second"] / reference["cached"]["events_per_cpu_second"],
        "decode_vs_bdt_uncached": decode["events_per_cpu_second"] / reference_uncached["uncached"]["events_per_cpu_second"],
        "agent_vmrss_max_mb": agent["vmrss_max_kb"] / 1024,
        "agent_vmhwm_mb": agent["vmhwm_kb"] / 1024,
        "agent_rss_anon_mb": agent["rss_anon_max_kb"] / 1024,
        "agent_rss_file_mb": agent["rss_file_kb"] / 1024,
        "agent_cpu_percent": agent["cpu_percent"],
        "agent_source_vmhwm_mb": agent_source["vmhwm_kb"] / 1024,
        "agent_source_cpu_percent": agent_source["cpu_percent"],
        "locator_10000_tags_vmhwm_mb": scale["locator_vmhwm_kb"] / 1024,
        "locator_10000_tags_rss_anon_mb": scale["locator_rss_anon_kb"] / 1024,
        "locator_10000_tags_cpu_us_per_reading": scale["locator_cpu_us_per_reading"],
        "locator_10000_tags_readings_per_second": scale["readings_per_second"],
        "locator_10000_tags_tracked": scale["tags_tracked"],
        "loop_us_per_reading": loop["loop_us_per_reading"],
        "loop_readings_per_cpu_second": loop["loop_readings_per_cpu_second"],
        "loop_decode_us_per_reading": loop["decode_us_per_reading"],
        "loop_process_us_per_reading": loop["process_us_per_reading"],
        "loop_load_readings_per_second": loop["readings_per_second_of_load"],
        "loop_capacity_vs_load": loop["loop_readings_per_cpu_second"] / loop["readings_per_second_of_load"],
    }
    f = figures
    targets = [
        ("Engine throughput, trilateration", f["engine_readings_per_cpu_second"] >= 1_000_000,
         "≥ 1,000,000 readings/s per core"),
        ("Engine against scipy", f["engine_vs_scipy_readings"] >= 50, "≥ 50× the scipy reference"),
        ("Engine throughput, grid filter (issue 11)", f["grid_readings_per_cpu_second"] >= 1_000_000,
         "≥ 1,000,000 readings/s per core"),
        ("Grid filter at 10,000 tags (issue 11)", f["grid_10000_tags_vmhwm_mb"] <= 200, "≤ 200 MB"),
        ("Locator share of the broker ceiling", f["locator_share_of_ceiling"] >= 0.9, "≥ 90 %"),
        ("Reading-to-occupancy latency, p99", f["latency_p99_ms"] <= 50, "≤ 50 ms"),
        ("Agent decoding", f["decode_vs_bdt"] >= 20, "≥ 20× bluetooth-data-tools"),
        ("Agent resident memory", f["agent_vmhwm_mb"] <= 10, "≤ 10 MB"),
        ("Locator at 10,000 tags", f["locator_10000_tags_vmhwm_mb"] <= 200, "≤ 200 MB"),
        ("Locator end to end (issue 16)", f["locator_readings_per_second"] >= 1_000_000
         and f["locator_share_of_ceiling"] >= 0.35, "≥ 1,000,000 readings/s and ≥ 35 % of the ceiling"),
        # Kept up too: a locator that falls behind its input may still use only part of the cores.
        ("Real time at 10,000 tags and 200 agents: headroom (issue 16)", f["realtime_10000_headroom"] >= 3
         and f["realtime_10000_samples"] > 0, "≥ 3× (the locator's CPU ≤ 33 % of the cores), keeping up"),
        ("Engine cost per reading, 100 → 10,000 tags (issue 16)", f["cost_per_reading_10000_vs_100_tags"] <= 1.2,
         "≤ 1.2×"),
        ("Latency p99 while 10,000 tags run (issue 16)", f["realtime_10000_p99_ms"] is not None
         and f["realtime_10000_p99_ms"] <= 50, "≤ 50 ms"),
    ]
    def milliseconds(value):
        return "-" if value is None else f"{value:.0f} ms"

    rows = [
        ("Engine, trilateration (1,000 tags, 50 agents; `--positioning trilateration`)",
         f"{f['engine_readings_per_cpu_second']:,.0f} readings/s per core; {f['engine_solves_per_cpu_second']:,.0f} "
         f"tag fixes/s ({f['readings_per_solve']:.1f} readings each)",
         f"scipy least_squares: {f['scipy_solves_per_cpu_second']:,.0f} fixes/s = "
         f"{f['scipy_readings_per_cpu_second']:,.0f} readings/s",
         f"{f['engine_vs_scipy_readings']:.1f}× readings/s, {f['engine_vs_scipy_solves']:.1f}× fixes/s"),
        (f"Engine on {f['engine_workers']:.0f} workers (1,000 tags, 50 agents; grid filter; `--workers`)",
         f"{f['engine_workers_readings_per_wall_second']:,.0f} readings per wall second",
         f"the same engine on one worker: {f['engine_one_worker_readings_per_wall_second']:,.0f}",
         f"{f['engine_workers_speedup']:.2f}×"),
        ("Engine, grid filter, the default tracker (1,000 tags, 50 agents; cells per floor)",
         f"{f['grid_readings_per_cpu_second']:,.0f} readings/s per core (median error "
         f"{f['grid_median_error_m']:.2f} m)",
         f"trilateration, the first row: {f['engine_readings_per_cpu_second']:,.0f} (median error "
         f"{f['engine_median_error_m']:.2f} m)", f"{f['grid_vs_trilateration']:.2f}×"),
        ("Engine, grid filter at 10,000 tags (50 agents)",
         f"VmHWM {f['grid_10000_tags_vmhwm_mb']:.0f} MB (the bench process: engine and synthetic load); "
         f"{f['grid_10000_tags_readings_per_cpu_second']:,.0f} readings/s per core", "—", "—"),
        ("Engine cost per reading, 100 → 10,000 tags (grid filter)",
         f"{f['engine_readings_per_cpu_second_100_tags']:,.0f} → {f['engine_readings_per_cpu_second_10000_tags']:,.0f}"
         " readings/s per core", "the same engine at 100 tags",
         f"{f['cost_per_reading_10000_vs_100_tags']:.3f}× the cost"),
        ("Pipeline: agents → mosquitto → locator",
         f"{f['locator_readings_per_second']:,.0f} readings/s",
         f"mosquitto_sub on the same stream: {f['broker_ceiling_readings_per_second']:,.0f} readings/s",
         f"{100 * f['locator_share_of_ceiling']:.0f} % of the ceiling"),
        (f"Reading → occupancy latency (1,000 tags, {f['latency_load_readings_per_second']:,.0f} readings/s, "
         "default update interval 0.02 s)",
         f"p50 {f['latency_p50_ms']:.0f} ms, p99 {f['latency_p99_ms']:.0f} ms ({f['latency_samples']:.0f} samples); "
         f"p50 {f['latency_p50_batch_to_decision_ms']:.0f} ms to the decision, "
         f"{f['latency_p50_decision_to_arrival_ms']:.0f} ms from there to the subscriber",
         "—", "—"),
        (f"Real time at 10,000 tags and 200 agents ({f['realtime_10000_readings_per_second']:,.0f} readings/s)",
         f"locator CPU {100 * f['realtime_10000_locator_share_of_cores']:.1f} % of the cores "
         f"({f['realtime_10000_locator_cpu_us_per_reading']:.1f} µs per reading); latency p50 "
         f"{milliseconds(f['realtime_10000_p50_ms'])}, p99 {milliseconds(f['realtime_10000_p99_ms'])} "
         f"({f['realtime_10000_samples']:.0f} samples)", "—", f"{f['realtime_10000_headroom']:.1f}× headroom"),
        ("The same with trilateration (`--positioning trilateration`)",
         f"locator CPU {100 * f['realtime_10000_trilateration_locator_share_of_cores']:.1f} % of the cores "
         f"({f['realtime_10000_trilateration_locator_cpu_us_per_reading']:.1f} µs per reading); latency p50 "
         f"{milliseconds(f['realtime_10000_trilateration_p50_ms'])}, p99 {milliseconds(f['realtime_10000_trilateration_p99_ms'])} "
         f"({f['realtime_10000_trilateration_samples']:.0f} samples)", "—",
         f"{f['realtime_10000_trilateration_headroom']:.1f}× headroom"),
        ("Agent decoding (287 captured HCI events)",
         f"{f['decode_events_per_cpu_second']:,.0f} events/s per core",
         f"bluetooth-data-tools: {f['bdt_events_per_cpu_second']:,.0f} events/s (uncached parser "
         f"{f['bdt_uncached_events_per_cpu_second']:,.0f})",
         f"{f['decode_vs_bdt']:.1f}× ({f['decode_vs_bdt_uncached']:.1f}× uncached)"),
        ("Agent replaying 1,000 adverts/s, as packaged (Swift runtime linked in)",
         f"VmHWM {f['agent_vmhwm_mb']:.1f} MB (own memory RssAnon {f['agent_rss_anon_mb']:.1f} MB, mapped files "
         f"{f['agent_rss_file_mb']:.1f} MB); CPU {f['agent_cpu_percent']:.1f} % of a core",
         f"built from source (`swift build`): VmHWM {f['agent_source_vmhwm_mb']:.1f} MB, CPU "
         f"{f['agent_source_cpu_percent']:.1f} %", "—"),
        ("Locator, 10,000 tags and 200 agents",
         f"VmHWM {f['locator_10000_tags_vmhwm_mb']:.0f} MB; {f['locator_10000_tags_cpu_us_per_reading']:.1f} µs CPU "
         f"per reading; {f['locator_10000_tags_readings_per_second']:,.0f} readings/s", "—", "—"),
        ("Locator's service loop alone, 10,000 tags and 200 agents, no broker (`loop`)",
         f"{f['loop_us_per_reading']:.2f} µs of the loop's CPU per reading: at most "
         f"{f['loop_readings_per_cpu_second']:,.0f} readings/s; decoding {f['loop_decode_us_per_reading']:.2f} µs "
         f"beside it; every thread {f['loop_process_us_per_reading']:.2f} µs",
         f"the load it replays: {f['loop_load_readings_per_second']:,.0f} readings/s",
         f"{f['loop_capacity_vs_load']:.2f}× the load"),
    ]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    markdown = [f"Measured {now} on {host['cpu']} ({host['cores']} cores), commit {host['commit']}, "
                "by `scripts/bench.sh`.", "", "| Figure | Result | Reference, same run | Ratio |", "|---|---|---|---|"]
    markdown += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    results = {
        "Engine throughput, trilateration": f"{f['engine_readings_per_cpu_second']:,.0f} readings/s",
        "Engine against scipy": f"{f['engine_vs_scipy_readings']:.1f}×",
        "Engine throughput, grid filter (issue 11)": f"{f['grid_readings_per_cpu_second']:,.0f} readings/s",
        "Grid filter at 10,000 tags (issue 11)": f"{f['grid_10000_tags_vmhwm_mb']:.0f} MB (VmHWM)",
        "Locator share of the broker ceiling": f"{100 * f['locator_share_of_ceiling']:.0f} %",
        "Reading-to-occupancy latency, p99": f"{f['latency_p99_ms']:.0f} ms",
        "Agent decoding": f"{f['decode_vs_bdt']:.1f}×",
        "Agent resident memory": f"{f['agent_vmhwm_mb']:.1f} MB (VmHWM)",
        "Locator at 10,000 tags": f"{f['locator_10000_tags_vmhwm_mb']:.0f} MB (VmHWM)",
        "Locator end to end (issue 16)": f"{f['locator_readings_per_second']:,.0f} readings/s, "
        f"{100 * f['locator_share_of_ceiling']:.0f} %",
        "Real time at 10,000 tags and 200 agents: headroom (issue 16)": f"{f['realtime_10000_headroom']:.1f}×"
        + ("" if f["realtime_10000_samples"] > 0 else " by CPU, but it fell behind (no probe decided)"),
        "Engine cost per reading, 100 → 10,000 tags (issue 16)": f"{f['cost_per_reading_10000_vs_100_tags']:.3f}×",
        "Latency p99 while 10,000 tags run (issue 16)": f"{f['realtime_10000_p99_ms']:.0f} ms"
        if f["realtime_10000_p99_ms"] is not None else "no samples",
    }
    markdown += ["", "| Target | Wanted | Measured | Met |", "|---|---|---|---|"]
    markdown += [f"| {name} | {wanted} | {results[name]} | {'met' if met else '**missed**'} |"
                 for name, met, wanted in targets]
    text = "\n".join(markdown) + "\n"
    with open(args.markdown, "w") as handle:
        handle.write(text)
    with open(args.json, "w") as handle:
        json.dump({"date": now, "machine": host, "figures": figures,
                   "targets": [{"target": n, "wanted": w, "met": m} for n, m, w in targets],
                   "raw": lines}, handle, indent=2)
        handle.write("\n")
    print()
    print(text)
    print(f"written: {args.json}, {args.markdown}")


if __name__ == "__main__":
    main()
