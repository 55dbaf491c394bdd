"""The families whose page ranks passages by channel scores (lexical, semantic, hybrid, rescue, ann, prf)."""
