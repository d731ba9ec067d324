(* The row-1 frontier (docs/methods.md, "The row-1 frontier"): its
   real-arithmetic core, checked by Coq 8.16 with the standard library only
   (Reals, Lra, Psatz).  Check:  coqc row1_frontier.v  in a scratch folder
   (tests/scripts/row1_coq_test.sh does that and reads Print Assumptions:
   only the axioms of Coq's standard real numbers may appear).

   Every statement holds for all reals named, with no model in it.  The
   vectors of docs/methods.md (u = M e_0, m_o(c), m_t(c'), x^o(c), x^t(c'),
   the errors r, r', r'') enter one coordinate at a time: each identity and
   inequality there is coordinatewise, so a lemma about one coordinate is
   the vector statement.  An error r of one row of one input is a real with
   |r| <= eps; eps >= E(theta) is what makes that true (not proved here).

   Items 1-7 of "Real-arithmetic core" in docs/methods.md:
     1. softmax_bos_and_self    Lemma 3: restricted to {BOS, self}, row j's
                                weights are those of (T1) scaled by
                                rho = 1 - W:  w_0/Z = rho (1 - gamma),
                                w_t/Z = rho gamma, (j-1) w_o/Z = 1 - rho.
        odds_scale_by_keys      Lemma 2: i equal keys multiply the odds by i:
                                (i w/(w_0 + i w)) / (w_0/(w_0 + i w)) = i (w/w_0).
        deficit_row1_from_row_i Lemma 2, the other form:
                                alpha_1 = alpha_i / (i - (i-1) alpha_i),
                                alpha_i = f(i o), alpha_1 = f(o).
     2. identity_T              Lemma 3, identity (T): u cancels,
                                W (m_o - x^t) = ((j-1)/j)(x^o - x^t) - rho r + r''.
     3. flag_step_column        Lemma 4, first half: m_o(c)_{n-1} >= kappa - eps
                                (kappa = (j-1)/j, 2 eps <= kappa).
        flag_step_row           Lemma 4, second half: alpha kappa <= 2 eps.
     4. content_step            Lemma 5: m >= x + eps, x = t - 2 eps/kappa.
     5. pair_step               Lemma 6: (O_+ + O_-) (P - eps) <= 2 eps,
                                O = alpha/(1 - alpha); u cancels.
     6. f_concave_midpoint      Lemma 7: (f(o) + f(o'))/2 <= f((o + o')/2),
        f_increasing            f(o) = o/(1 + o) increasing on [0, inf);
        f_range, f_odds         0 <= f(o) < 1 and f(o)/(1 - f(o)) = o.
     7. joint_bound             route (i) of "What the other routes give":
                                alpha |z| <= 2 eps max(alpha, gamma).

   Chained (the lemmas above composed, with the model's row equations as
   hypotheses):
     flag_odds_bound            Lemma 4 at j = L-1, i = L-2, with Lemma 2:
                                (F)  o <= o_F = K/((1-K)(L-2)),
                                K = 2 eps (L-1)/(L-2) < 1.
     content_coordinate_bound   Lemma 5 from (T1) and row j = L-1 (through
                                identity_T): s m_o(c)_{2+d} >= t - eps L/(L-2).
     pair_odds_bound            Lemma 6 in odds form:
                                (o + o')/2 <= o_C(t) = eps/((L-2) t - 2 (L-1) eps).
     pointwise_bound            Lemma 7: odds <= o_F, mean odds <= o_C give
                                (f(o) + f(o'))/2 <= f(min(o_F, o_C)).
     row1_pointwise             Lemma 7 from the row equations of a content c
                                and its reflection c^(d) (content_rows):
                                (alpha(c) + alpha(c^(d)))/2 <= phi(t), with
                                alpha = f(o), on each branch of phi: both
                                bounds (K < 1, K < t), the flag alone (K < 1;
                                o_C = inf), the pair alone (K < t; o_F = inf)
                                and neither (phi = f(inf) = 1: the mean is < 1).

   NOT in Coq (on paper in docs/methods.md, checked numerically by
   scripts/row1_frontier_reference.py):
     - the model: that softmax weights are exp of the scores, that row j and
       row 1 of (T1) score BOS and self alike (no positional encoding), that
       the named inputs exist in T(n, L) (e.g. the trigger content
       s (t - t0) in [-1, 1]) -- the lemmas take the resulting weights and
       row equations as hypotheses;
     - the definition of E: that every error of the named inputs is at most
       eps, and Lemma 1 (|u_d| <= eps), both taken as hypotheses |.| <= eps;
     - the Theorem's measure step: the involution c -> c^(d(c)) preserving
       the uniform measure, the law P(T <= t) = t^k of T = max_d |c_d|, the
       expectation G(eps) = E[phi(T)], its closed form (an integral), its
       monotonicity and the root g(delta).
   Names follow docs/methods.md: f(o) = o/(1 + o) maps odds to deficits. *)

From Coq Require Import Reals Lra Psatz.
Open Scope R_scope.

(* |x| <= e as two inequalities. *)
Lemma abs_le_bounds : forall x e, Rabs x <= e -> - e <= x <= e.
Proof. intros x e H. unfold Rabs in H. destruct (Rcase_abs x); lra. Qed.

(* ==== Item 1 (Lemmas 2 and 3): softmax bookkeeping ==== *)

(* Row j of the input x_1..x_{j-1} = x^o(c), x_j = x^t(c'): weights w_0 on BOS,
   w_t on itself, w_o on each of the j-1 ordinary keys; gamma is row 1's
   non-BOS weight in (T1), rho = 1 - W with W the ordinary keys' total. *)
Lemma softmax_bos_and_self :
  forall w0 wt wo j : R,
  0 < w0 -> 0 < wt -> 0 < wo -> 2 <= j ->
  let Z := w0 + wt + (j - 1) * wo in
  let rho := (w0 + wt) / Z in
  let gamma := wt / (w0 + wt) in
  w0 / Z = rho * (1 - gamma) /\ wt / Z = rho * gamma /\ (j - 1) * wo / Z = 1 - rho.
Proof.
  intros w0 wt wo j H0 Ht Ho Hj Z rho gamma.
  assert (HZ : 0 < Z) by (unfold Z; nra).
  unfold rho, gamma, Z in *. repeat split; field; lra.
Qed.

(* Lemma 2: i keys of weight w against BOS weight w_0: odds i (w/w_0). *)
Lemma odds_scale_by_keys :
  forall w w0 i : R, 0 < w -> 0 < w0 -> 1 <= i ->
  (i * w / (w0 + i * w)) / (w0 / (w0 + i * w)) = i * (w / w0).
Proof.
  intros w w0 i Hw H0 Hi.
  assert (0 < i * w) by nra.
  field. lra.
Qed.

(* f maps odds to deficits: alpha = o/(1 + o). *)
Definition f (o : R) : R := o / (1 + o).

(* Lemma 2: alpha_1 = alpha_i/(i - (i-1) alpha_i) with alpha_i = f(i o). *)
Lemma deficit_row1_from_row_i :
  forall o i : R, 0 <= o -> 1 <= i ->
  f o = f (i * o) / (i - (i - 1) * f (i * o)).
Proof.
  intros o i Ho Hi. unfold f.
  assert (0 <= i * o) by nra.
  field. repeat split; nra.
Qed.

(* ==== Item 2 (Lemma 3): identity (T), one coordinate ====
   (T1): (1 - gamma) u + gamma m_t = x^t + r; row j: rho (1 - gamma) u +
   W m_o + rho gamma m_t = ((j-1) x^o + x^t)/j + r''; rho = 1 - W. *)
Lemma identity_T :
  forall u mo mt xo xt r r2 W gamma j : R,
  j <> 0 ->
  (1 - gamma) * u + gamma * mt = xt + r ->
  (1 - W) * (1 - gamma) * u + W * mo + (1 - W) * gamma * mt = ((j - 1) * xo + xt) / j + r2 ->
  W * (mo - xt) = (j - 1) / j * (xo - xt) - (1 - W) * r + r2.
Proof.
  intros u mo mt xo xt r r2 W gamma j Hj HT1 Hrow.
  assert (E : (1 - W) * (1 - gamma) * u + (1 - W) * gamma * mt = (1 - W) * (xt + r))
    by (rewrite <- HT1; ring).
  assert (Hm : W * mo = ((j - 1) * xo + xt) / j + r2 - (1 - W) * (xt + r)) by lra.
  replace (W * (mo - xt)) with (W * mo - W * xt) by ring.
  rewrite Hm. field. exact Hj.
Qed.

(* ==== Item 3 (Lemma 4): the flag step ====
   Coordinate n-1 of (T): x^o - x^t = 1 there, so W m = kappa - rho r + r''
   with kappa = (j-1)/j; m is m_o(c)_{n-1}. *)
Lemma flag_step_column :
  forall W m r r2 eps kappa : R,
  0 < W <= 1 -> Rabs r <= eps -> Rabs r2 <= eps -> 2 * eps <= kappa ->
  W * m = kappa - (1 - W) * r + r2 ->
  kappa - eps <= m.
Proof.
  intros W m r r2 eps kappa HW Hr Hr2 Hk H.
  apply abs_le_bounds in Hr. apply abs_le_bounds in Hr2.
  assert (A : (1 - W) * r <= (1 - W) * eps) by nra.
  assert (B : 0 <= (1 - W) * (kappa - 2 * eps)) by nra.
  assert (C : 0 <= W * (m - (kappa - eps))) by nra.
  nra.
Qed.

(* Coordinate n-1 of (O) for row i: alpha m + (1 - alpha) u = r', with
   |u| <= eps by Lemma 1. *)
Lemma flag_step_row :
  forall alpha m u r' eps kappa : R,
  0 <= alpha <= 1 -> Rabs r' <= eps -> Rabs u <= eps -> kappa - eps <= m ->
  alpha * m + (1 - alpha) * u = r' ->
  alpha * kappa <= 2 * eps. (* MUTATION-SITE flag *)
Proof.
  intros alpha m u r' eps kappa Ha Hr Hu Hm H.
  apply abs_le_bounds in Hr. apply abs_le_bounds in Hu.
  assert (A : - ((1 - alpha) * eps) <= (1 - alpha) * u) by nra.
  assert (B : alpha * (kappa - eps) <= alpha * m) by nra.
  nra.
Qed.

(* ==== Item 4 (Lemma 5): the content step ====
   Coordinate 2+d of (T) times s: m = s m_o(c)_{2+d}, x = s c'_d = t - t0,
   kappa (t - x) = 2 eps. *)
Lemma content_step :
  forall W m r r2 eps kappa t x : R,
  0 < W <= 1 -> 0 < kappa -> Rabs r <= eps -> Rabs r2 <= eps ->
  x = t - 2 * eps / kappa ->
  W * (m - x) = kappa * (t - x) - (1 - W) * r + r2 ->
  x + eps <= m.
Proof.
  intros W m r r2 eps kappa t x HW Hk Hr Hr2 Hx H.
  assert (Hkx : kappa * (t - x) = 2 * eps) by (subst x; field; lra).
  apply abs_le_bounds in Hr. apply abs_le_bounds in Hr2.
  assert (A : (1 - W) * r <= (1 - W) * eps) by nra.
  assert (C : 0 <= W * (m - (x + eps))) by nra.
  nra.
Qed.

(* ==== Item 5 (Lemma 6): the pair step ====
   Coordinate 2+d of (O) at row L-2 for c (alpha_+, m_+ >= P) and c^(d)
   (alpha_-, m_- <= -P); the same u in both, eliminated. *)
Lemma pair_step :
  forall ap am P eps mp mm u rp rm : R,
  0 <= ap < 1 -> 0 <= am < 1 -> eps < P -> Rabs rp <= eps -> Rabs rm <= eps ->
  P <= mp -> mm <= - P ->
  ap * mp + (1 - ap) * u = rp ->
  am * mm + (1 - am) * u = rm ->
  (ap / (1 - ap) + am / (1 - am)) * (P - eps) <= 2 * eps. (* MUTATION-SITE pair *)
Proof.
  intros ap am P eps mp mm u rp rm Hp Hm HP Hrp Hrm Hmp Hmm Ep Em.
  apply abs_le_bounds in Hrp. apply abs_le_bounds in Hrm.
  assert (Ap : ap * P <= eps - (1 - ap) * u) by nra.
  assert (Am : am * P <= eps + (1 - am) * u) by nra.
  assert (Key : P * (ap * (1 - am) + am * (1 - ap)) <= eps * (2 - ap - am)) by nra.
  assert (Hd : 0 < (1 - ap) * (1 - am)) by nra.
  replace ((ap / (1 - ap) + am / (1 - am)) * (P - eps))
    with ((P * (ap * (1 - am) + am * (1 - ap)) - eps * (ap * (1 - am) + am * (1 - ap)))
          / ((1 - ap) * (1 - am))) by (field; lra).
  apply Rmult_le_reg_r with ((1 - ap) * (1 - am)); [exact Hd |].
  unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. nra.
Qed.

(* ==== Item 6 (Lemma 7): f is concave and increasing ==== *)
Lemma f_concave_midpoint :
  forall o o' : R, 0 <= o -> 0 <= o' -> (f o + f o') / 2 <= f ((o + o') / 2).
Proof.
  intros o o' Ho Ho'. unfold f.
  assert (E : f ((o + o') / 2) - (f o + f o') / 2
              = (o - o') * (o - o') / (2 * (1 + o) * (1 + o') * (2 + o + o')))
    by (unfold f; field; lra).
  unfold f in E.
  assert (0 <= (o - o') * (o - o') / (2 * (1 + o) * (1 + o') * (2 + o + o'))).
  { apply Rmult_le_pos; [apply Rle_0_sqr | left; apply Rinv_0_lt_compat].
    repeat apply Rmult_lt_0_compat; lra. }
  lra.
Qed.

Lemma f_increasing : forall o o' : R, 0 <= o <= o' -> f o <= f o'.
Proof.
  intros o o' H. unfold f.
  assert (E : o' / (1 + o') - o / (1 + o) = (o' - o) / ((1 + o) * (1 + o'))) by (field; lra).
  assert (0 <= (o' - o) / ((1 + o) * (1 + o'))).
  { apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; nra]. }
  lra.
Qed.

Lemma f_range : forall o : R, 0 <= o -> 0 <= f o < 1.
Proof.
  intros o Ho. unfold f. split.
  - apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra].
  - apply (Rmult_lt_reg_r (1 + o)); [lra |].
    unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Lemma f_odds : forall o : R, 0 <= o -> f o / (1 - f o) = o.
Proof. intros o Ho. unfold f. field. lra. Qed.

(* ==== Item 7: the joint bound, route (i) ==== *)
Lemma joint_bound :
  forall alpha gamma z r r' u eps : R,
  0 <= alpha -> 0 <= gamma -> Rabs r <= eps -> Rabs r' <= eps -> Rabs u <= eps ->
  alpha * z = gamma * r' - alpha * r + (alpha - gamma) * u ->
  alpha * Rabs z <= 2 * eps * Rmax alpha gamma.
Proof.
  intros alpha gamma z r r' u eps Ha Hg Hr Hr' Hu H.
  apply abs_le_bounds in Hr. apply abs_le_bounds in Hr'. apply abs_le_bounds in Hu.
  assert (G1 : - (gamma * eps) <= gamma * r' <= gamma * eps) by (split; nra).
  assert (G2 : - (alpha * eps) <= alpha * r <= alpha * eps) by (split; nra).
  assert (G3 : - (Rabs (alpha - gamma) * eps) <= (alpha - gamma) * u
               <= Rabs (alpha - gamma) * eps).
  { unfold Rabs. destruct (Rcase_abs (alpha - gamma)); split; nra. }
  rewrite <- (Rabs_pos_eq alpha) at 1 by exact Ha. rewrite <- Rabs_mult.
  unfold Rmax, Rabs in *. destruct (Rle_dec alpha gamma);
    destruct (Rcase_abs (alpha * z)); destruct (Rcase_abs (alpha - gamma)); nra.
Qed.

(* ==== Chained: Lemmas 4-7 from the row equations ==== *)

(* Division helpers. *)
Lemma le_div : forall a b c : R, 0 < b -> a * b <= c -> a <= c / b.
Proof.
  intros a b c Hb H. apply Rmult_le_reg_r with b; [exact Hb |].
  unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Lemma lt_of_div_lt : forall a b c : R, 0 < b -> a / b < c -> a < c * b.
Proof.
  intros a b c Hb H. apply Rmult_lt_compat_r with (r := b) in H; [| exact Hb].
  unfold Rdiv in H. rewrite Rmult_assoc, Rinv_l in H by lra. lra.
Qed.

(* (F): Lemma 4 at j = L-1 (kappa = (L-2)/(L-1)), i = L-2, with the odds of
   row L-2 equal to (L-2) o (Lemma 2). Hypotheses, coordinate n-1 (x^o has
   1 there, x^t 0): (T1), row L-1 of the trigger input, (O) at row L-2. *)
Lemma flag_odds_bound :
  forall L eps W gamma u mo mt r r2 r' o : R,
  3 <= L -> 0 < W <= 1 -> 0 <= o ->
  Rabs u <= eps -> Rabs r <= eps -> Rabs r2 <= eps -> Rabs r' <= eps ->
  let K := 2 * eps * (L - 1) / (L - 2) in
  K < 1 ->
  (1 - gamma) * u + gamma * mt = 0 + r ->
  (1 - W) * (1 - gamma) * u + W * mo + (1 - W) * gamma * mt
    = ((L - 2) * 1 + 0) / (L - 1) + r2 ->
  (1 - f ((L - 2) * o)) * u + f ((L - 2) * o) * mo = r' ->
  o <= K / ((1 - K) * (L - 2)).
Proof.
  intros L eps W gamma u mo mt r r2 r' o HL HW Ho Hu Hr Hr2 Hr' K HK HT1 Hrow HO.
  set (kappa := (L - 2) / (L - 1)).
  assert (HkL : kappa * (L - 1) = L - 2) by (unfold kappa; field; lra).
  assert (HKL : K * (L - 2) = 2 * eps * (L - 1)) by (unfold K; field; lra).
  assert (Heps : 0 <= eps) by (pose proof (Rabs_pos u); lra).
  assert (HK0 : 0 <= K).
  { unfold K. apply Rmult_le_pos; [nra | left; apply Rinv_0_lt_compat; lra]. }
  assert (Hk : 2 * eps <= kappa).
  { assert (2 * eps * (L - 1) < L - 2) by nra.
    assert (0 <= (kappa - 2 * eps) * (L - 1)) by nra. nra. }
  assert (Hrow' : (1 - W) * (1 - gamma) * u + W * mo + (1 - W) * gamma * mt
                  = ((L - 1 - 1) * 1 + 0) / (L - 1) + r2)
    by (replace (L - 1 - 1) with (L - 2) by ring; exact Hrow).
  pose proof (identity_T u mo mt 1 0 r r2 W gamma (L - 1) ltac:(lra) HT1 Hrow') as HT.
  assert (Hcol : W * mo = kappa - (1 - W) * r + r2).
  { replace (L - 1 - 1) with (L - 2) in HT by ring. unfold kappa. lra. }
  pose proof (flag_step_column W mo r r2 eps kappa HW Hr Hr2 Hk Hcol) as Hm.
  set (a := (L - 2) * o).
  assert (Ha : 0 <= a) by (unfold a; nra).
  pose proof (f_range a Ha) as Hfa.
  assert (HO' : f a * mo + (1 - f a) * u = r') by (unfold a; lra).
  pose proof (flag_step_row (f a) mo u r' eps kappa ltac:(lra) Hr' Hu Hm HO') as Hflag.
  assert (HfK : f a <= K).
  { assert (f a * (L - 2) <= K * (L - 2)).
    { rewrite HKL, <- HkL. nra. }
    nra. }
  assert (Hfa1 : f a * (1 + a) = a) by (unfold f; field; lra).
  assert (Hao : a * (1 - K) <= K) by nra.
  apply le_div; [nra |].
  unfold a in Hao. nra.
Qed.

(* Lemma 5 at j = L-1 from (T1) and row L-1 at coordinate 2+d, with
   c_d = s t and the trigger content c'_d = s (t - t0). *)
Lemma content_coordinate_bound :
  forall L eps t s W gamma u mo mt r r2 : R,
  3 <= L -> 0 < W <= 1 -> Rabs r <= eps -> Rabs r2 <= eps -> (s = 1 \/ s = -1) ->
  let t0 := 2 * eps * (L - 1) / (L - 2) in
  (1 - gamma) * u + gamma * mt = s * (t - t0) + r ->
  (1 - W) * (1 - gamma) * u + W * mo + (1 - W) * gamma * mt
    = ((L - 2) * (s * t) + s * (t - t0)) / (L - 1) + r2 ->
  t - eps * L / (L - 2) <= s * mo.
Proof.
  intros L eps t s W gamma u mo mt r r2 HL HW Hr Hr2 Hs t0 HT1 Hrow.
  set (kappa := (L - 2) / (L - 1)).
  assert (Hk : 0 < kappa).
  { unfold kappa. apply Rmult_lt_0_compat; [lra | apply Rinv_0_lt_compat; lra]. }
  assert (Hrow' : (1 - W) * (1 - gamma) * u + W * mo + (1 - W) * gamma * mt
                  = ((L - 1 - 1) * (s * t) + s * (t - t0)) / (L - 1) + r2)
    by (replace (L - 1 - 1) with (L - 2) by ring; exact Hrow).
  pose proof (identity_T u mo mt (s * t) (s * (t - t0)) r r2 W gamma (L - 1)
                ltac:(lra) HT1 Hrow') as HT.
  replace (L - 1 - 1) with (L - 2) in HT by ring.
  assert (Habs : forall x, Rabs (s * x) = Rabs x).
  { intro x. rewrite Rabs_mult.
    replace (Rabs s) with 1 by (destruct Hs as [-> | ->]; unfold Rabs;
                                destruct (Rcase_abs _); lra).
    ring. }
  assert (Ht0 : t - t0 = t - 2 * eps / kappa) by (unfold t0, kappa; field; lra).
  assert (Hend : t - eps * L / (L - 2) = t - t0 + eps) by (unfold t0; field; lra).
  rewrite Hend.
  apply (content_step W (s * mo) (s * r) (s * r2) eps kappa t (t - t0) HW Hk);
    [rewrite Habs; exact Hr | rewrite Habs; exact Hr2 | exact Ht0 |].
  unfold kappa.
  destruct Hs as [-> | ->]; lra.
Qed.

(* Lemma 6 in odds form: m_+ = m_o(c)_{2+d}, m_- = m_o(c^(d))_{2+d},
   P = t - eps L/(L-2), (O) at row L-2 for both, odds (L-2) o and (L-2) o'. *)
Lemma pair_odds_bound :
  forall L eps t s u mp mm rp rm o o' : R,
  3 <= L -> 0 <= o -> 0 <= o' -> Rabs rp <= eps -> Rabs rm <= eps -> (s = 1 \/ s = -1) ->
  2 * eps * (L - 1) / (L - 2) < t ->
  t - eps * L / (L - 2) <= s * mp ->
  t - eps * L / (L - 2) <= - (s * mm) ->
  (1 - f ((L - 2) * o)) * u + f ((L - 2) * o) * mp = rp ->
  (1 - f ((L - 2) * o')) * u + f ((L - 2) * o') * mm = rm ->
  (o + o') / 2 <= eps / ((L - 2) * t - 2 * (L - 1) * eps).
Proof.
  intros L eps t s u mp mm rp rm o o' HL Ho Ho' Hrp Hrm Hs Ht Hmp Hmm Ep Em.
  set (P := t - eps * L / (L - 2)) in *.
  set (D := (L - 2) * t - 2 * (L - 1) * eps).
  assert (HD : 0 < D).
  { apply lt_of_div_lt in Ht; [| lra]. unfold D. lra. }
  assert (HPD : (P - eps) * (L - 2) = D) by (unfold P, D; field; lra).
  assert (HP : eps < P) by nra.
  assert (Habs : forall x, Rabs (s * x) = Rabs x).
  { intro x. rewrite Rabs_mult.
    replace (Rabs s) with 1 by (destruct Hs as [-> | ->]; unfold Rabs;
                                destruct (Rcase_abs _); lra).
    ring. }
  set (a := (L - 2) * o). set (a' := (L - 2) * o').
  assert (Ha : 0 <= a) by (unfold a; nra). assert (Ha' : 0 <= a') by (unfold a'; nra).
  pose proof (f_range a Ha). pose proof (f_range a' Ha').
  assert (Hmm' : s * mm <= - P) by lra.
  assert (Ep' : f a * (s * mp) + (1 - f a) * (s * u) = s * rp)
    by (rewrite <- Ep; unfold a; ring).
  assert (Em' : f a' * (s * mm) + (1 - f a') * (s * u) = s * rm)
    by (rewrite <- Em; unfold a'; ring).
  rewrite <- (Habs rp) in Hrp. rewrite <- (Habs rm) in Hrm.
  pose proof (pair_step (f a) (f a') P eps (s * mp) (s * mm) (s * u) (s * rp) (s * rm)
                ltac:(lra) ltac:(lra) HP Hrp Hrm Hmp Hmm' Ep' Em') as Hpair.
  rewrite (f_odds a Ha), (f_odds a' Ha') in Hpair.
  apply le_div; [exact HD |].
  assert (E : (o + o') / 2 * D = (a + a') * (P - eps) / 2)
    by (unfold a, a'; rewrite <- HPD; field).
  rewrite E. lra.
Qed.

(* Lemma 7: both odds <= o_F, mean odds <= o_C. *)
Lemma pointwise_bound :
  forall o o' oF oC : R,
  0 <= o -> 0 <= o' -> o <= oF -> o' <= oF -> (o + o') / 2 <= oC ->
  (f o + f o') / 2 <= f (Rmin oF oC).
Proof.
  intros o o' oF oC Ho Ho' HF HF' HC.
  apply Rle_trans with (f ((o + o') / 2)); [apply f_concave_midpoint; assumption |].
  apply f_increasing. split; [lra |].
  unfold Rmin. destruct (Rle_dec oF oC); lra.
Qed.

(* The row equations and error bounds the loss gives for one content
   (sign sg = c_d/t, t = |c_d|), row-1 odds o; one trigger input (trigger
   at L-1, content c'_d = sg (t - t0)) read at coordinates n-1 (_f) and
   2+d (_c), and the input with the trigger after L-2 at row L-2 (q_f,
   q_c its errors). u_f, u_c: u = M e_0 at coordinates n-1 and 2+d. *)
Definition content_rows
  (L eps t sg u_f u_c W gamma mt_f mt_c r_f r_c r2_f r2_c mo_f mo_c q_f q_c o : R) : Prop :=
  let t0 := 2 * eps * (L - 1) / (L - 2) in
  let alpha := f ((L - 2) * o) in
  0 <= o /\ 0 < W <= 1 /\
  Rabs r_f <= eps /\ Rabs r_c <= eps /\ Rabs r2_f <= eps /\ Rabs r2_c <= eps /\
  Rabs q_f <= eps /\ Rabs q_c <= eps /\
  (1 - gamma) * u_f + gamma * mt_f = 0 + r_f /\
  (1 - gamma) * u_c + gamma * mt_c = sg * (t - t0) + r_c /\
  (1 - W) * (1 - gamma) * u_f + W * mo_f + (1 - W) * gamma * mt_f
    = ((L - 2) * 1 + 0) / (L - 1) + r2_f /\
  (1 - W) * (1 - gamma) * u_c + W * mo_c + (1 - W) * gamma * mt_c
    = ((L - 2) * (sg * t) + sg * (t - t0)) / (L - 1) + r2_c /\
  (1 - alpha) * u_f + alpha * mo_f = q_f /\
  (1 - alpha) * u_c + alpha * mo_c = q_c.

(* Lemma 7 (the pointwise bound) from the row equations of c (sign s) and
   c^(d) (sign -s); alpha(c) = f(o), alpha(c^(d)) = f(o'). The four
   conjuncts are the four branches of phi(t) = f(min(o_F, o_C(t))), with
   o_F = inf when K >= 1 and o_C(t) = inf when t <= t0 = K. *)
Theorem row1_pointwise :
  forall (L eps t s u_f u_c : R)
         (W gamma mt_f mt_c r_f r_c r2_f r2_c mo_f mo_c q_f q_c o : R)
         (W' gamma' mt_f' mt_c' r_f' r_c' r2_f' r2_c' mo_f' mo_c' q_f' q_c' o' : R),
  3 <= L -> (s = 1 \/ s = -1) -> Rabs u_f <= eps ->
  content_rows L eps t s u_f u_c W gamma mt_f mt_c r_f r_c r2_f r2_c mo_f mo_c q_f q_c o ->
  content_rows L eps t (- s) u_f u_c
    W' gamma' mt_f' mt_c' r_f' r_c' r2_f' r2_c' mo_f' mo_c' q_f' q_c' o' ->
  let K := 2 * eps * (L - 1) / (L - 2) in
  let oF := K / ((1 - K) * (L - 2)) in
  let oC := eps / ((L - 2) * t - 2 * (L - 1) * eps) in
  (K < 1 -> K < t -> (f o + f o') / 2 <= f (Rmin oF oC)) /\
  (K < 1 -> (f o + f o') / 2 <= f oF) /\
  (K < t -> (f o + f o') / 2 <= f oC) /\
  (f o + f o') / 2 < 1.
Proof.
  intros L eps t s u_f u_c W gamma mt_f mt_c r_f r_c r2_f r2_c mo_f mo_c q_f q_c o
         W' gamma' mt_f' mt_c' r_f' r_c' r2_f' r2_c' mo_f' mo_c' q_f' q_c' o'
         HL Hs Hu Hp Hm K oF oC.
  unfold content_rows in Hp, Hm.
  destruct Hp as (Ho & HW & Hrf & Hrc & Hr2f & Hr2c & Hqf & Hqc & HT1f & HT1c & Hrowf & Hrowc
                  & HOf & HOc).
  destruct Hm as (Ho' & HW' & Hrf' & Hrc' & Hr2f' & Hr2c' & Hqf' & Hqc' & HT1f' & HT1c'
                  & Hrowf' & Hrowc' & HOf' & HOc').
  assert (Hs' : - s = 1 \/ - s = -1) by (destruct Hs as [-> | ->]; [right | left]; ring).
  (* Lemma 4 and (F): both odds are at most oF when K < 1 *)
  assert (HF : K < 1 -> o <= oF /\ o' <= oF).
  { intro HK. split.
    - exact (flag_odds_bound L eps W gamma u_f mo_f mt_f r_f r2_f q_f o
               HL HW Ho Hu Hrf Hr2f Hqf HK HT1f Hrowf HOf).
    - exact (flag_odds_bound L eps W' gamma' u_f mo_f' mt_f' r_f' r2_f' q_f' o'
               HL HW' Ho' Hu Hrf' Hr2f' Hqf' HK HT1f' Hrowf' HOf'). }
  (* Lemmas 5 and 6: the mean odds are at most oC when K < t *)
  assert (HC : K < t -> (o + o') / 2 <= oC).
  { intro Ht.
    pose proof (content_coordinate_bound L eps t s W gamma u_c mo_c mt_c r_c r2_c
                  HL HW Hrc Hr2c Hs HT1c Hrowc) as Hplus.
    pose proof (content_coordinate_bound L eps t (- s) W' gamma' u_c mo_c' mt_c' r_c' r2_c'
                  HL HW' Hrc' Hr2c' Hs' HT1c' Hrowc') as Hminus.
    replace (- s * mo_c') with (- (s * mo_c')) in Hminus by ring.
    exact (pair_odds_bound L eps t s u_c mo_c mo_c' q_c q_c' o o'
             HL Ho Ho' Hqc Hqc' Hs Ht Hplus Hminus HOc HOc'). }
  split; [| split; [| split]].
  - intros HK Ht. destruct (HF HK) as [H1 H2].
    exact (pointwise_bound o o' oF oC Ho Ho' H1 H2 (HC Ht)).
  - intro HK. destruct (HF HK) as [H1 H2].
    apply Rle_trans with (f ((o + o') / 2)); [apply f_concave_midpoint; assumption |].
    apply f_increasing. lra.
  - intro Ht.
    apply Rle_trans with (f ((o + o') / 2)); [apply f_concave_midpoint; assumption |].
    apply f_increasing. split; [lra | exact (HC Ht)].
  - pose proof (f_range o Ho). pose proof (f_range o' Ho'). lra.
Qed.

(* The axioms each lemma rests on: only those of Coq's standard reals.
   row1_pointwise uses identity_T, flag_step_column, flag_step_row,
   content_step, pair_step, f_concave_midpoint, f_increasing, f_range,
   f_odds and the chained lemmas, so its list covers theirs (one Print
   Assumptions costs about half a second); the other four are printed on
   their own. *)
Print Assumptions row1_pointwise.
Print Assumptions softmax_bos_and_self.
Print Assumptions odds_scale_by_keys.
Print Assumptions deficit_row1_from_row_i.
Print Assumptions joint_bound.
