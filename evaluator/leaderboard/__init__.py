"""`lab leaderboard`: audited campaigns' methods ranked, the inseparable grouped, each priced."""
