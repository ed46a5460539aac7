"""Live recording on a transport: subscriptions -> the recorder, the recorder node (services,
status, diagnostics, marker), and simulated devices publishing a rig's topics."""
