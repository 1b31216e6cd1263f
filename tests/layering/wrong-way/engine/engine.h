/* engine.h - a stand-in header for the layering check's fixture. */
