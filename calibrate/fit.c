/*
 * fit.c - robust alpha-beta and saturating-rate fits with GSL (see fit.h).
 *
 * Both models are Hockney's (R. W. Hockney, "The communication challenge for MPP", Parallel
 * Computing 20(3), 1994; and Hockney & Jesshope, "Parallel Computers 2", 1988, sec. 1.3):
 * t(s) = t0 + s / r_inf, whose rate s / t(s) = r_inf / (1 + n_half / s) with n_half = t0 r_inf.
 * For copies the time form is fitted directly; for GEMMs the rate form, because the quantity
 * of interest (efficiency) is a rate and its residuals should be relative to it.
 */
#include "fit.h"

#include "common/xalloc.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>

#define FIT_RESCALE_PASSES 3

static int check_points(const double *size, const double *y, size_t n, const char *what,
                        const char *y_name, Err *err)
{
    if (n < 3)
        return err_set(err, "%s: expected at least 3 measured sizes to fit, got %zu", what, n);
    bool has_two_sizes = false;
    for (size_t i = 0; i < n; i++) {
        if (!(size[i] > 0) || !isfinite(size[i]))
            return err_set(err, "%s: point %zu: expected a size > 0, got %g", what, i, size[i]);
        if (!(y[i] > 0) || !isfinite(y[i]))
            return err_set(err, "%s: point %zu: expected a %s > 0, got %g", what, i, y_name, y[i]);
        if (size[i] != size[0])
            has_two_sizes = true;
    }
    if (!has_two_sizes)
        return err_set(err, "%s: expected at least two distinct sizes, got one (%g)", what,
                       size[0]);
    return 0;
}

/* R^2 and relative residuals of predictions pred[] against measurements y[]. */
static void quality(const double *y, const double *pred, size_t n, CalibFitQuality *q)
{
    double mean = 0, ss_res = 0, ss_tot = 0, rms = 0, max_rel = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        double rel = (pred[i] - y[i]) / y[i];
        ss_res += (y[i] - pred[i]) * (y[i] - pred[i]);
        ss_tot += (y[i] - mean) * (y[i] - mean);
        rms += rel * rel;
        if (fabs(rel) > max_rel)
            max_rel = fabs(rel);
    }
    q->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
    q->rms_rel_residual = sqrt(rms / (double)n);
    q->max_rel_residual = max_rel;
    q->n_points = n;
}

int fit_latency_bw(const double *size, const double *time_s, size_t n, const char *what,
                   FitLatencyBw *out, Err *err)
{
    if (check_points(size, time_s, n, what, "time", err))
        return -1;
    gsl_set_error_handler_off();
    /* Each equation t_i = c0 + c1 s_i is divided by a scale of t_i, so the residuals are
     * relative; the sizes are divided by their largest so both columns are of order one. */
    double s_max = 0;
    for (size_t i = 0; i < n; i++)
        s_max = size[i] > s_max ? size[i] : s_max;
    gsl_matrix *X = gsl_matrix_alloc(n, 2);
    gsl_vector *y = gsl_vector_alloc(n);
    gsl_vector *c = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_robust_workspace *w =
        gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, n, 2);
    int rc = 0;
    if (X == NULL || y == NULL || c == NULL || cov == NULL || w == NULL) {
        rc = err_set(err, "%s: cannot allocate the GSL robust fit", what);
        goto done;
    }
    /* Relative residuals need a scale per point: the measured time at first, then the time
     * the previous pass predicts, so that y_i = t_i / scale_i varies and an outlier's
     * residual is measured against the model rather than against itself. */
    double *scale = xmalloc(n * sizeof *scale);
    for (size_t i = 0; i < n; i++)
        scale[i] = time_s[i];
    int status = GSL_SUCCESS;
    for (int pass = 0; pass < FIT_RESCALE_PASSES; pass++) {
        for (size_t i = 0; i < n; i++) {
            gsl_matrix_set(X, i, 0, 1.0 / scale[i]);
            gsl_matrix_set(X, i, 1, size[i] / s_max / scale[i]);
            gsl_vector_set(y, i, time_s[i] / scale[i]);
        }
        status = gsl_multifit_robust(X, y, c, cov, w);
        /* GSL_EMAXITER leaves the last iterate in c: the weights had not settled, the
         * estimate is still the best available and its residuals are reported. */
        if (status != GSL_SUCCESS && status != GSL_EMAXITER)
            break;
        for (size_t i = 0; i < n; i++) {
            double t_hat = gsl_vector_get(c, 0) + gsl_vector_get(c, 1) * size[i] / s_max;
            if (t_hat > 0 && isfinite(t_hat))
                scale[i] = t_hat;
        }
    }
    free(scale);
    if (status != GSL_SUCCESS && status != GSL_EMAXITER) {
        rc = err_set(err, "%s: robust linear fit failed: %s", what, gsl_strerror(status));
        goto done;
    }
    double c0 = gsl_vector_get(c, 0), c1 = gsl_vector_get(c, 1) / s_max;
    /* Beyond 1e18 units/s (the calibration format's limit) the sizes were all too small to
     * show a bandwidth: the times did not grow with them. */
    if (!(c1 > 1e-18) || !isfinite(c1) || !isfinite(c0)) {
        rc = err_set(err,
                     "%s: expected times that grow with size, got a fitted slope of %g s "
                     "per unit (no measurable bandwidth)",
                     what, c1);
        goto done;
    }
    out->is_latency_clamped = c0 < 0;
    out->latency_s = c0 < 0 ? 0.0 : c0;
    out->bw_per_s = 1.0 / c1;
    double *pred = xmalloc(n * sizeof *pred);
    for (size_t i = 0; i < n; i++)
        pred[i] = out->latency_s + size[i] / out->bw_per_s;
    quality(time_s, pred, n, &out->quality);
    free(pred);
done:
    gsl_multifit_robust_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    return rc;
}

/* The saturating model in scaled parameters: x0 = r_max / y_scale, x1 = ln(half / s_scale);
 * the logarithm keeps the half size positive without constraints. */
typedef struct SatData {
    const double *size;
    const double *rate;
    size_t n;
    double y_scale;
    double s_scale;
} SatData;

static int sat_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    const SatData *d = params;
    double r = gsl_vector_get(x, 0) * d->y_scale, h = d->s_scale * exp(gsl_vector_get(x, 1));
    for (size_t i = 0; i < d->n; i++) {
        double model = r * d->size[i] / (d->size[i] + h);
        gsl_vector_set(f, i, (model - d->rate[i]) / d->rate[i]);
    }
    return GSL_SUCCESS;
}

static int sat_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
    const SatData *d = params;
    double r = gsl_vector_get(x, 0) * d->y_scale, h = d->s_scale * exp(gsl_vector_get(x, 1));
    for (size_t i = 0; i < d->n; i++) {
        double s = d->size[i], denom = s + h;
        /* d model / d x0 = y_scale s / (s + h); d model / d x1 = -r s h / (s + h)^2. */
        gsl_matrix_set(J, i, 0, d->y_scale * s / denom / d->rate[i]);
        gsl_matrix_set(J, i, 1, -r * s * h / (denom * denom) / d->rate[i]);
    }
    return GSL_SUCCESS;
}

int fit_saturating(const double *size, const double *rate, size_t n, const char *what,
                   FitSaturating *out, Err *err)
{
    if (check_points(size, rate, n, what, "rate", err))
        return -1;
    gsl_set_error_handler_off();
    SatData d = {size, rate, n, 0, 0};
    double log_sum = 0;
    for (size_t i = 0; i < n; i++) {
        d.y_scale = rate[i] > d.y_scale ? rate[i] : d.y_scale;
        log_sum += log(size[i]);
    }
    d.s_scale = exp(log_sum / (double)n);

    /* Start: ordinary least squares of the time form t = h / r + s / r, each equation divided
     * by t (relative residuals): 1 = (h/r) / t_i + (1/r) s_i / t_i, solved in closed form. */
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
    for (size_t i = 0; i < n; i++) {
        double t = size[i] / rate[i];
        double u = 1.0 / t, v = size[i] / d.s_scale / t;
        a11 += u * u, a12 += u * v, a22 += v * v, b1 += u, b2 += v;
    }
    double det = a11 * a22 - a12 * a12;
    double t0 = det != 0 ? (a22 * b1 - a12 * b2) / det : 0;
    double inv_r = det != 0 ? (a11 * b2 - a12 * b1) / det / d.s_scale : 0;
    double r0 = inv_r > 0 ? 1.0 / inv_r : d.y_scale;
    double h0 = t0 > 0 ? t0 * r0 : d.s_scale * 1e-3;
    double x_init[2] = {r0 / d.y_scale, log(h0 / d.s_scale)};
    if (!isfinite(x_init[0]) || !isfinite(x_init[1]) || x_init[0] <= 0) {
        x_init[0] = 1.0;
        x_init[1] = 0.0;
    }

    gsl_multifit_nlinear_fdf fdf = {0};
    fdf.f = sat_f;
    fdf.df = sat_df;
    fdf.fvv = NULL;
    fdf.n = n;
    fdf.p = 2;
    fdf.params = &d;
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, 2);
    if (w == NULL)
        return err_set(err, "%s: cannot allocate the GSL nonlinear fit", what);
    gsl_vector_view x0 = gsl_vector_view_array(x_init, 2);
    int info = 0;
    int status = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 0.0, NULL, NULL, &info, w);
    int rc = 0;
    if (status != GSL_SUCCESS) {
        rc = err_set(err, "%s: nonlinear least-squares fit failed: %s", what, gsl_strerror(status));
    } else {
        const gsl_vector *x = gsl_multifit_nlinear_position(w);
        out->rate_max = gsl_vector_get(x, 0) * d.y_scale;
        out->half_size = d.s_scale * exp(gsl_vector_get(x, 1));
        if (!(out->rate_max > 0) || !isfinite(out->rate_max) || !isfinite(out->half_size)) {
            rc = err_set(err, "%s: expected a positive saturation rate, got %g", what,
                         out->rate_max);
        } else {
            double *pred = xmalloc(n * sizeof *pred);
            for (size_t i = 0; i < n; i++)
                pred[i] = out->rate_max * size[i] / (size[i] + out->half_size);
            quality(rate, pred, n, &out->quality);
            free(pred);
        }
    }
    gsl_multifit_nlinear_free(w);
    return rc;
}
