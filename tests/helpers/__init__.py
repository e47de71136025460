"""What several test modules share: repositories, run factories, ADK files, the browser, workshop-shaped data. Test modules import these, never each other."""
