"""Running a campaign: lab process and client, prepare, snapshot, evaluate, resource monitor."""
