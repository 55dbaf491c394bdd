"""The shared samples the lab's sample protocols and tests read: each folder, its files with their
size and SHA-256, the dataset they come from, its licence and how the rows were chosen. One home for
these pins: `lab data list` prints them (docs/data.md is that output), `lab data verify` checks a
folder against them, and the sample protocols pin the same hashes (tests/importer/test_samples.py).

The files are never in this repository (their licences ask for attribution, and the lab reads
data where the user keeps it): by default in ../shared/data beside the clone, anywhere else with
--data-dir.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = Path("../shared/data")  # beside the clone: where the Makefile's sample demos look


@dataclass(frozen=True)
class PinnedFile:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Sample:
    folder: str  # under the data directory; "." for a file at its top
    files: tuple[PinnedFile, ...]
    dataset: str
    licence: str
    origin: str  # where the bytes come from
    rows: str  # which rows, and how they were chosen
    used_by: str  # what in the lab reads it


MUSIQUE = "MuSiQue-Ans v1.0 (Trivedi et al., TACL 2022)"
HOTPOTQA = "HotpotQA distractor (Yang et al., EMNLP 2018)"
TWOWIKI = "2WikiMultihopQA (Ho et al., COLING 2020)"
HIPPORAG_LEGACY = "HippoRAG repository, branch legacy, commit b144c46df14cabe5f5822d8caded4bec5f709461"
MIGRES = "the AdelWang/MIGRES repository at commit 1de6265c9ca1014054d6ba875738e785830908f8"

SAMPLES: tuple[Sample, ...] = (
    Sample("musique-sample",
           (PinnedFile("musique_sample_train.jsonl", 1178988,
                       "c638ff72d0b7d384cf9d2c1a8ac806369831c05b8fd269b26c1d7720bc630127"),
            PinnedFile("musique_sample_dev.jsonl", 1215801,
                       "35cadbeea3f2fb230fe1b778008b3a77f1b431bb03fb48b8fc43b9c9400925c5")),
           MUSIQUE, "CC BY 4.0",
           "real rows of the official train and dev files, one JSON object a line (not the official bytes)",
           "100 train rows (the development rows) and 100 dev rows (the test rows); the sample's MANIFEST.json "
           "does not record how they were drawn",
           "make demo-sample; the musique-sample-* protocols"),
    Sample("hotpotqa-sample",
           (PinnedFile("hotpot_sample_dev.json", 618917,
                       "a1cc32f187a44044c60b1ca8e497c1eb3c9f6cb2d7cb7433c5daf174b1a5e50c"),),
           HOTPOTQA, "CC BY-SA 4.0",
           f"dev rows as kept in data/hotpot.json of {MIGRES}, the keys that repository added removed",
           "100 rows: its even positions, rows without a context dropped",
           "the hotpotqa-sample-* protocols"),
    Sample("2wikimultihopqa-sample",
           (PinnedFile("2wiki_sample_dev.json", 389771,
                       "65ecfc92b7faed61fb09741c9f7381d586edf0cee15c3a9c9e853cda4615a11d"),),
           TWOWIKI, "Apache-2.0",
           f"dev rows as kept in data/wikihop.json of {MIGRES}, the keys that repository added removed",
           "82 rows: its even positions, rows without a context dropped",
           "the 2wikimultihopqa-sample-* protocols"),
    Sample("hipporag-musique-sample",
           (PinnedFile("musique_train.json", 1179088,
                       "bca674746844637f5c68408a96b67bc0542d98e7c53715f3acafe144bd5e4ff4"),
            PinnedFile("musique_train_corpus.json", 974514,
                       "79845dd085f9df49c8ce440208763e2611aeb86c81ee0bdad2094504381bb651")),
           MUSIQUE + "; layout and files MIT (HippoRAG)", "CC BY 4.0 (rows), MIT (files)",
           f"the original bytes of data/musique_train.json and data/musique_train_corpus.json, {HIPPORAG_LEGACY}",
           "the same 100 train rows as musique-sample's train file, and their 1,890 distinct passages",
           "the hipporag-musique-* protocols (docs/hipporag.md)"),
    Sample("hipporag-2wikimultihopqa-corpus",
           (PinnedFile("2wikimultihopqa_corpus.json", 3083943,
                       "9d6e352952aafb18dab22bf8195039461321a44a949df902ae83bce134ad238a"),),
           TWOWIKI + "; file MIT (HippoRAG)", "Apache-2.0 (rows), MIT (file)",
           "the original bytes of reproduce/dataset/2wikimultihopqa_corpus.json, HippoRAG repository, commit "
           "c617143f01477243992a63b2e2151cc003dd3b21",
           "the 6,119 passages of HippoRAG's 1,000-question 2Wiki cohort (its question file is not here)",
           "corpus-scale benchmarks and tests (docs/scale.md)"),
    Sample("hipporag-musique-openie",
           (PinnedFile("openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json", 3344000,
                       "4258bcc89bb20bb5c20e6700b87e21063521a6c3ef5a136ab0d0d7c0ea237585"),),
           "HippoRAG's OpenIE graph (gpt-3.5-turbo-1106) over hipporag-musique-sample's corpus",
           "MIT (file), CC BY 4.0 (passages)",
           f"the original bytes of output/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json, "
           f"{HIPPORAG_LEGACY}",
           "entities and triples of all 1,890 passages",
           "the hipporag-musique-openie-* protocols (docs/graph-import.md, docs/hipporag2.md)"),
    Sample(".",
           (PinnedFile("musique-dev-metadata.jsonl", 413656,
                       "32936fb6bc1dcdff98cb0d6af1faf832d3e4aeb5f4db0d97258cf741a905f86e"),
            PinnedFile("reference-cohort.json", 6190,
                       "93dcb802c8ea3817ff84db18b7e6a4fdf2721f64dda618fbaacc700a712433be")),
           MUSIQUE, "CC BY 4.0 (rows); facts",
           "id, question and answerable of every official dev row, in official order; the published reference "
           "cohort (official hashes, seed, counts, the ids its selection yields)",
           "all 2,417 dev rows (no paragraphs)",
           "the selection tests (tests/importer)"),
)


@dataclass(frozen=True)
class Finding:
    folder: str
    name: str
    status: str  # "ok", "missing", "size" or "sha256"
    detail: str = ""


def verify(data_dir: Path, samples: tuple[Sample, ...] = SAMPLES) -> list[Finding]:
    """Every pinned file of every sample under `data_dir`, checked by size then SHA-256."""
    from ground.canonical import sha256_file

    found = []
    for sample in samples:
        for pinned in sample.files:
            path = data_dir / sample.folder / pinned.name
            if not path.is_file():
                found.append(Finding(sample.folder, pinned.name, "missing", f"no file {path}"))
                continue
            size = path.stat().st_size
            if size != pinned.size:
                found.append(Finding(sample.folder, pinned.name, "size", f"{size:,} bytes, pinned {pinned.size:,}"))
                continue
            sha = sha256_file(path)
            found.append(Finding(sample.folder, pinned.name, "ok") if sha == pinned.sha256 else
                         Finding(sample.folder, pinned.name, "sha256", f"sha256 {sha}, pinned {pinned.sha256}"))
    return found


def tables(samples: tuple[Sample, ...] = SAMPLES) -> str:
    """The two Markdown tables docs/data.md holds: each folder (dataset, licence, where the bytes
    come from, the rows, what reads it), then each file with its size and SHA-256."""
    lines = ["| folder | dataset | licence | where the bytes come from | rows | read by |",
             "|---|---|---|---|---|---|"]
    lines += [f"| `{s.folder}` | {s.dataset} | {s.licence} | {s.origin} | {s.rows} | {s.used_by} |" for s in samples]
    lines += ["", "| folder | file | bytes | SHA-256 |", "|---|---|---|---|"]
    lines += [f"| `{s.folder}` | `{f.name}` | {f.size:,} | `{f.sha256}` |" for s in samples for f in s.files]
    return "\n".join(lines) + "\n"
