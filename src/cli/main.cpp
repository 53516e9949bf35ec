// Placeholder until the controller lands in this issue.
int main() { return 1; }
