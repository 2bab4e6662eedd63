"""From findings to a ported notebook: ``porter lint`` (static checks of source with the
recorder's catalogue) and the rewrites of cells from the replacement table."""
