//! Sector-distance choice between two requests (being written).
