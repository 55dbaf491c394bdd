"""`lab prepare`: a running lab loaded with a campaign's inputs, resumably, and what it must then hold."""
