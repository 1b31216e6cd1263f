/*
 * units.h - the unit constants used to convert published figures once, at the edge.
 *
 * Inside zerosim every byte count is in bytes, every time in seconds, every rate per second;
 * names carry the unit (`hbm_bytes`, `bw_bytes_per_s`). Sources quote GB, GiB, Gb/s and
 * TFLOP/s; these constants turn them into base units in inputs/ and back in report/.
 */
#ifndef ZEROSIM_COMMON_UNITS_H
#define ZEROSIM_COMMON_UNITS_H

#define UNITS_KIB 1024.0
#define UNITS_MIB (1024.0 * 1024.0)
#define UNITS_GIB (1024.0 * 1024.0 * 1024.0)
#define UNITS_TIB (1024.0 * 1024.0 * 1024.0 * 1024.0)
#define UNITS_GB 1e9
#define UNITS_TB 1e12
#define UNITS_GBIT_PER_S (1e9 / 8.0) /* bytes per second in one Gb/s */
#define UNITS_TFLOPS 1e12

#endif
