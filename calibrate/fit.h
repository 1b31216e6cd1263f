/*
 * fit.h - the two models zerosim-calibrate fits to its measurements (GSL).
 *
 *  - Latency-bandwidth (Hockney's alpha-beta): time = latency + size / bandwidth, for copies
 *    and collectives. A robust linear fit (gsl_multifit_robust, bisquare weights) on the
 *    relative residual (each equation divided by its time: the measured one, then twice more
 *    the previous pass's fitted one), so that a 4 KiB copy weighs as much as a 4 GiB one and
 *    a few outliers (a preempted repetition, a protocol switch in NCCL) do not drag the line.
 *  - Saturating rate (Hockney's r_inf, n_1/2): rate = r_max / (1 + half_size / size), for GEMM
 *    FLOP/s against the GEMM's FLOPs. Nonlinear least squares (gsl_multifit_nlinear,
 *    Levenberg-Marquardt) on relative residuals, started from the linear fit of time = (size
 *    + half_size) / r_max.
 * Both report R^2 (in time for the first, in rate for the second) and the relative residuals.
 * The GSL error handler is switched off; every status is checked and turned into an Err.
 */
#ifndef ZEROSIM_CALIBRATE_FIT_H
#define ZEROSIM_CALIBRATE_FIT_H

#include "common/err.h"
#include "inputs/calibration.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct FitLatencyBw {
    double latency_s;
    double bw_per_s;         /* size units per second (bytes/s) */
    bool is_latency_clamped; /* the fit gave a negative intercept; latency set to 0 */
    CalibFitQuality quality;
} FitLatencyBw;

typedef struct FitSaturating {
    double rate_max;  /* the asymptote r_max (FLOP/s) */
    double half_size; /* the size at which the rate is r_max / 2 (FLOPs) */
    CalibFitQuality quality;
} FitSaturating;

/* Fits time_s[i] = latency + size[i] / bw over n >= 3 points with at least two distinct sizes,
 * all sizes and times > 0. `what` names the data in messages ("copy h2d_pinned"). Fails when
 * GSL fails or the fitted bandwidth is not positive. */
int fit_latency_bw(const double *size, const double *time_s, size_t n, const char *what,
                   FitLatencyBw *out, Err *err);

/* Fits rate[i] = rate_max / (1 + half_size / size[i]) over n >= 3 points (sizes and rates
 * > 0). Same failure rules. */
int fit_saturating(const double *size, const double *rate, size_t n, const char *what,
                   FitSaturating *out, Err *err);

#endif
