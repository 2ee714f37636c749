import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import ch6_mmpp, mmpp
q = {"grid": 3, "sigma": 0.2, "mr_types": [{"count": 9, "aps": 1, "stations": 2}], "t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 9e-3, "p_ap_up": 2e-2, "p_ap_down": 4e-2, "p_mr": 6e-2, "phi1": 0.09, "phi2": 0.06, "lambda1": 20.0, "lambda2": 0.5}
a = ch6_mmpp.ref_ch6_mmpp(q)
orig = mmpp.output_fit
def alt(m, mu, t=None):
    return orig(m, mu, t=0.5 * m.tfit())
ch6_mmpp.output_fit = alt
b = ch6_mmpp.ref_ch6_mmpp(q)
for k in a: print(f"{k}: M-3 t=tfit(input) {a[k]:.10g} | t=tfit/2 {b[k]:.10g} | rel {abs(a[k]-b[k])/a[k]:.2e}")
