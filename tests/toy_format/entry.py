    "toyqa_v1": RowFormat("toyqa_v1", "toyqa-", ("bridge", "comparison"), ("bridge", "comparison"), by_type=True,
                          selection_version="identifier_type_strata_v1", reader="toyqa",
                          template="hotpotqa-sample-v3.json"),
