"""Write the v1 protocol of a shared HotpotQA or 2WikiMultihopQA sample: musique-sample-v1's
methods, budgets and profiles, the dataset's row format, licence and attribution, and the sample
file pinned by the raw SHA-256 computed here and checked against the sample's MANIFEST.json (so no
hash is ever typed by hand).

    python scripts/pin_sample_protocol.py hotpotqa --sample-dir ../shared/data/hotpotqa-sample \
        --output protocols/hotpotqa-sample-v1.json
    python scripts/pin_sample_protocol.py 2wikimultihopqa --sample-dir ../shared/data/2wikimultihopqa-sample \
        --output protocols/2wikimultihopqa-sample-v1.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols import refuse_existing, save, sha256_file  # noqa: E402
from protocols.artifacts import ROW_FORMATS  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import load_json  # noqa: E402
from protocols.schema import load_protocol, validate_protocol  # noqa: E402

PROTOCOLS = Path(__file__).resolve().parents[1] / "protocols"
TEMPLATE = PROTOCOLS / "musique-sample-v1.json"

SAMPLES = {
    "hotpotqa": {
        "version": "hotpotqa-sample-v1",
        "row_format": "hotpotqa_distractor_v1",
        "title": "Graph-assisted multi-hop retrieval on the 100-row HotpotQA distractor sample "
                 "(shared/data/hotpotqa-sample)",
        "name": "HotpotQA, distractor setting (dev rows)",
        "license": "CC BY-SA 4.0",
        "attribution": "Zhilin Yang, Peng Qi, Saizheng Zhang, Yoshua Bengio, William W. Cohen, Ruslan "
                       "Salakhutdinov and Christopher D. Manning. HotpotQA: A Dataset for Diverse, "
                       "Explainable Multi-hop Question Answering. EMNLP 2018. https://hotpotqa.github.io",
        "test": {"bridge": 50, "comparison": 22},
        "development": {"bridge": 12, "comparison": 8},
    },
    "2wikimultihopqa": {
        "version": "2wikimultihopqa-sample-v1",
        "row_format": "2wikimultihopqa_v1",
        "title": "Graph-assisted multi-hop retrieval on the 82-row 2WikiMultihopQA sample "
                 "(shared/data/2wikimultihopqa-sample)",
        "name": "2WikiMultihopQA (dev rows)",
        "license": "Apache-2.0",
        "attribution": "Xanh Ho, Anh-Khoa Duong Nguyen, Saku Sugawara and Akiko Aizawa. Constructing A "
                       "Multi-hop QA Dataset for Comprehensive Evaluation of Reasoning Steps. COLING 2020. "
                       "https://github.com/Alab-NII/2wikimultihop",
        "test": {"compositional": 20, "comparison": 16, "bridge_comparison": 12, "inference": 3},
        "development": {"compositional": 5, "comparison": 4, "bridge_comparison": 4, "inference": 1},
    },
}


def manifest_file(sample_dir: Path, dataset: str) -> tuple[str, str, str]:
    """(file name, raw SHA-256 computed here, provenance) of the sample; refuses a file whose hash
    or row count the manifest contradicts."""
    manifest = load_json(sample_dir / "MANIFEST.json", "sample manifest")
    if manifest.get("dataset") != dataset:
        raise RefusedInput(f"{sample_dir}/MANIFEST.json describes dataset {manifest.get('dataset')!r}, not {dataset!r}")
    path = sample_dir / manifest["file"]
    if not path.is_file():
        raise RefusedInput(f"sample file not found: {path}")
    actual = sha256_file(path)
    if actual != manifest["sha256"]:
        raise RefusedInput(f"{path} has sha256 {actual}, its MANIFEST.json says {manifest['sha256']}")
    return manifest["file"], actual, manifest["provenance"]


def sample_protocol(template: dict, dataset: str, sample_dir: Path) -> dict:
    """The template with identity, row format, dataset, file and counts replaced; key order kept."""
    spec = SAMPLES[dataset]
    name, sha256, provenance = manifest_file(sample_dir, dataset)
    replaced = {
        "protocol_version": spec["version"],
        "title": spec["title"],
        "dataset": {
            "name": spec["name"],
            "license": spec["license"],
            "attribution": f"{spec['attribution']}. Sample rows: {provenance}.",
        },
        "source_files": {"dev": {"name": name, "sha256": sha256}},
    }
    protocol: dict = {}
    for key, value in template.items():
        protocol[key] = replaced.get(key, value)
        if key == "title":
            protocol["row_format"] = spec["row_format"]
    selection = dict(protocol["selection"])
    selection["version"] = ROW_FORMATS[spec["row_format"]].selection_version
    selection["splits"] = {
        "test": {"source": "dev", "counts": dict(spec["test"])},
        "development": {"source": "dev", "counts": dict(spec["development"])},
    }
    selection["expected_ids"] = None
    protocol["selection"] = selection
    return protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=sorted(SAMPLES))
    parser.add_argument("--sample-dir", required=True, type=Path, help="the sample directory with its MANIFEST.json")
    parser.add_argument("--output", required=True, type=Path, help="protocol file to write (must not exist)")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    protocol = validate_protocol(sample_protocol(load_protocol(TEMPLATE), args.dataset, args.sample_dir))
    save(args.output, protocol)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
