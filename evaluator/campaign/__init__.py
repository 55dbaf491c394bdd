"""Running a campaign: lab process and client, prepare, state, plan, snapshot, evaluate, resource monitor."""
