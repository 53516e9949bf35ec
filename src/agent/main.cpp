// Placeholder until the agent lands in this issue.
int main() { return 1; }
