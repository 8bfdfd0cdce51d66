"""Leave-one-dataset-out test of a sentence-level dense signal (round 4b, issue 17 item 2).

Run: .venv/bin/python bench/sentence_dense.py --cache FILE.db [--shared ../shared/eval]
       [--data /work/evaldata] [--scores SCORES.pkl] [--json OUT.json]

**The idea.** A paraphrased question often matches one sentence of a long passage better than
the passage as a whole, whose vector averages every sentence. Each passage's sentences
(``engines.extract.split_sentences`` of the passage text: headings, code and tables skipped,
markdown marks removed, sentences of fewer than 3 words dropped) are embedded alone with the
same MiniLM, and a passage gets two sentence scores against the query: its best sentence's
cosine (``sent_max``) and the mean of its two best (``sent_top2``; a one-sentence passage
uses its one). A passage without an eligible sentence takes its passage cosine. Scores are
clipped at 0, as the passage cosine is in ``bench/fusion_loo.py``.

**Variants, fixed before any leave-one-out run** (the reference is the shipped default:
weights body 1, title 0.5, dense 3, lexical trust 2):

- ``add-max``, ``add-top2``: a fourth signal beside the passage dense, ``default + w * sent``,
  ``w`` in {0.5, 1, 1.5, 2, 3}, chosen for each held-out set on the other five (best mean
  margin; ties go to the smaller ``w``).
- ``mix-max``, ``mix-top2``: the dense signal becomes ``max(passage cosine, sent)``, the
  default's weights unchanged (no free parameter).

The sentence signals alone (``sent_max``, ``sent_top2``) are reported and count among the
single signals: a set's *best single* is the best of body, title, dense, sent_max, sent_top2
(document level MRR, ties counted against the relevant document).

**Ship rule, fixed in advance.** A variant qualifies only if, under leave-one-out, (1) on every
set its held-out margin over the best single signal is at least ``min(-0.005, the default's
margin there)`` (it never breaks the floor where the default keeps it, and is never lower
than the default where the default already breaks it), (2) its mean margin over the six sets
is at least 0.005 above the default's, and (3) its Recall@3 on the demo eval set is not
below the default's. Of the qualifying variants, the one with the best mean margin ships;
if none qualifies, nothing ships and this script stays the record.

Costs printed per set: sentences, sentences per passage, the float32 sentence matrix's size,
the CPU seconds to embed the sentences (cache misses only; the first run on an empty cache
is the honest one) and the CPU per query of sentence scoring against passage dense scoring.
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from fusion_loo import SIGNALS, Scored, loo_arguments, loo_folders

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.engines.extract import split_sentences
from supportagent.retrieval.eval import read_beir
from supportagent.retrieval.fusion import DEFAULT_LEXICAL_TRUST, DEFAULT_WEIGHTS
from supportagent.retrieval.passages import _MARKUP
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

ADD_WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0)
SENTENCE_SIGNALS = ("sent_max", "sent_top2")
FLOOR, GAIN, MIN_WORDS = -0.005, 0.005, 3


def passage_sentences(text: str) -> list[str]:
    """The sentences of one passage that are embedded on their own."""
    out = []
    for sentence in split_sentences(text):
        clean = " ".join(_MARKUP.sub(" ", sentence).split())
        if len(clean.split()) >= MIN_WORDS:
            out.append(clean)
    return out


def sentence_scores(
    matrix: np.ndarray, owner: np.ndarray, query: np.ndarray, fallback: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per passage: best sentence cosine and mean of the two best (``owner`` sorted)."""
    n = len(fallback)
    best = fallback.copy()
    top2 = fallback.copy()
    if len(owner):
        cos = matrix @ query
        order = np.lexsort((-cos, owner))  # by passage, best sentence first
        cos, own = cos[order], owner[order]
        first = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
        counts = np.diff(np.r_[first, len(own)])
        best[own[first]] = cos[first]
        second = np.where(counts > 1, cos[np.minimum(first + 1, len(cos) - 1)], cos[first])
        top2[own[first]] = (cos[first] + second) / 2
    return np.clip(best, 0.0, None)[:n], np.clip(top2, 0.0, None)[:n]


def add_sentence_signals(
    s: Scored, dataset, retriever: HybridRetriever, embedder
) -> dict[str, float]:
    """Put ``sent_max``/``sent_top2`` into each query's arrays; return the costs measured."""
    passages = retriever._snapshot.passages
    texts: list[str] = []
    owner: list[int] = []
    for row, passage in enumerate(passages):
        for sentence in passage_sentences(passage.text):
            texts.append(sentence)
            owner.append(row)
    start = time.process_time()
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, 384))
    embed_cpu = time.process_time() - start
    owners = np.asarray(owner, dtype=np.int64)
    sent_cpu = dense_cpu = 0.0
    for query_id, arrays in zip(s.queries, s.arrays, strict=True):
        vector = retriever._query_vector(dataset.queries[query_id])
        t0 = time.process_time()
        passage_cos = retriever._snapshot.dense @ vector
        t1 = time.process_time()
        arrays["sent_max"], arrays["sent_top2"] = sentence_scores(
            matrix, owners, vector, passage_cos.astype(np.float64)
        )
        t2 = time.process_time()
        dense_cpu += t1 - t0
        sent_cpu += t2 - t1
        arrays["mix_max"] = np.maximum(arrays["dense"], arrays["sent_max"])
        arrays["mix_top2"] = np.maximum(arrays["dense"], arrays["sent_top2"])
    return {
        "passages": len(passages),
        "sentences": len(texts),
        "sentences_per_passage": len(texts) / max(len(passages), 1),
        "matrix_mb": matrix.nbytes / 1e6,
        "embed_cpu_s": embed_cpu,
        "query_dense_ms": 1000 * dense_cpu / len(s.queries),
        "query_sentence_ms": 1000 * sent_cpu / len(s.queries),
    }


def evaluate(s: Scored, weights: Mapping[str, float], trust: float) -> tuple[float, float]:
    """MRR and Recall@3 of a weighting (document level, ties against the relevant document)."""
    rr = r3 = 0.0
    for arrays, relevant in zip(s.arrays, s.relevant, strict=True):
        w = dict(weights)
        if trust and "body" in w:
            w["body"] *= 1.0 + trust * float(arrays["body"].max())
        fused = np.zeros(len(arrays["body"]), dtype=np.float64)
        for signal, value in w.items():
            if value:
                fused += value * arrays[signal]
        best = np.maximum.reduceat(fused, s.starts)
        hit = best[relevant].max()
        if hit > 0:
            rr += 1.0 / (1 + int((best[~relevant] >= hit).sum()))
        top = np.lexsort((relevant, -best))[:3]
        r3 += relevant[top].sum() / relevant.sum()
    return rr / len(s.arrays), r3 / len(s.arrays)


def variants() -> dict[str, list[tuple[object, dict[str, float]]]]:
    """Every variant as its list of (parameter, weights); one point when it has no parameter."""
    base = dict(DEFAULT_WEIGHTS)
    out: dict[str, list[tuple[object, dict[str, float]]]] = {"default": [(None, base)]}
    for kind in ("max", "top2"):
        out[f"add-{kind}"] = [(w, {**base, f"sent_{kind}": w}) for w in ADD_WEIGHTS]
        mixed = {k: v for k, v in base.items() if k != "dense"}
        out[f"mix-{kind}"] = [(None, {**mixed, f"mix_{kind}": base["dense"]})]
    return out


def build(args: argparse.Namespace) -> tuple[dict[str, Scored], dict[str, dict[str, float]]]:
    folders = loo_folders(args.shared, args.data)
    scored, costs = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'sent.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        for name, folder in folders.items():
            dataset = read_beir(folder)
            retriever = HybridRetriever(dataset.corpus, embedder=embedder)
            scored[name] = Scored(dataset, retriever)
            costs[name] = add_sentence_signals(scored[name], dataset, retriever, embedder)
            print(name, json.dumps({k: round(v, 3) for k, v in costs[name].items()}), flush=True)
        store.close()
    return scored, costs


def main() -> None:
    parser = loo_arguments()
    parser.add_argument("--scores", type=Path, help="pickle of the kept scores (made if absent)")
    args = parser.parse_args()
    if args.scores and args.scores.is_file():
        scored, costs = pickle.loads(args.scores.read_bytes())
    else:
        scored, costs = build(args)
        if args.scores:
            args.scores.write_bytes(pickle.dumps((scored, costs)))
    names = list(scored)
    singles = {
        n: {sig: evaluate(scored[n], {sig: 1.0}, 0.0) for sig in (*SIGNALS, *SENTENCE_SIGNALS)}
        for n in names
    }
    best = {n: max(v[0] for v in singles[n].values()) for n in names}
    table = {
        name: {n: [evaluate(scored[n], w, DEFAULT_LEXICAL_TRUST) for _, w in points] for n in names}
        for name, points in variants().items()
    }
    print("\nsingle signals, MRR / R@3:")
    for n in names:
        cells = [f"{sig} {m:.3f}/{r:.3f}" for sig, (m, r) in singles[n].items()]
        print(f"{n:14} " + "; ".join(cells))
    loo: dict[str, dict[str, dict[str, object]]] = {}
    for name, points in variants().items():
        loo[name] = {}
        for held in names:
            others = [n for n in names if n != held]
            means = [
                np.mean([table[name][n][i][0] - best[n] for n in others])
                for i in range(len(points))
            ]
            i = int(np.argmax(means))
            mrr, r3 = table[name][held][i]
            loo[name][held] = {
                "param": points[i][0],
                "mrr": mrr,
                "r3": r3,
                "margin": mrr - best[held],
            }
    print("\nleave-one-out, per held-out set: MRR / R@3 (margin over best single) [param]")
    for name in loo:
        print(name)
        for held, row in loo[name].items():
            print(
                f"  {held:14} {row['mrr']:.3f} / {row['r3']:.3f} ({row['margin']:+.3f})"
                f" [{row['param']}]  best single {best[held]:.3f}"
            )
    summary = {}
    ref = loo["default"]
    ref_mean = float(np.mean([r["margin"] for r in ref.values()]))
    for name, rows in loo.items():
        margins = [r["margin"] for r in rows.values()]
        floor_ok = all(rows[n]["margin"] >= min(FLOOR, ref[n]["margin"]) - 1e-12 for n in names)
        mean = float(np.mean(margins))
        demo_ok = rows["demo-eval"]["r3"] >= ref["demo-eval"]["r3"] - 1e-12
        qualifies = name != "default" and floor_ok and mean >= ref_mean + GAIN and demo_ok
        summary[name] = {
            "mean": round(mean, 4),
            "worst": round(min(margins), 4),
            "floor_ok": floor_ok,
            "demo_r3": round(rows["demo-eval"]["r3"], 4),
            "qualifies": qualifies,
        }
        print(name, summary[name])
    shipped = [n for n in summary if summary[n]["qualifies"]]
    winner = max(shipped, key=lambda n: summary[n]["mean"]) if shipped else None
    print("decision:", f"ship {winner}" if winner else "nothing ships; keep the default")
    in_sample = {
        name: {
            str(points[i][0]): [
                round(float(np.mean([table[name][n][i][0] - best[n] for n in names])), 4),
                round(min(table[name][n][i][0] - best[n] for n in names), 4),
            ]
            for i in range(len(points))
        }
        for name, points in variants().items()
    }
    print("in-sample (mean margin, worst set) by parameter:", json.dumps(in_sample))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "costs": costs,
                    "singles": singles,
                    "best_single": best,
                    "loo": loo,
                    "summary": summary,
                    "winner": winner,
                    "in_sample": in_sample,
                },
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
