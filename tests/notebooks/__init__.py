"""What runs the example notebooks unattended (nbval and refresh_outputs), kept out of the
folder the demo opens."""
