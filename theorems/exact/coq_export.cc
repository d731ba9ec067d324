// SPDX-License-Identifier: MIT
//
// The Coq certificate writer; the statement and the argument are in
// coq_export.h. The file is the fixed development kGeneric (the
// definitions, the checker over Q and its soundness proof, for any model),
// then the model's exact weights and the theorem for this model.
#include "theorems/exact/coq_export.h"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "src/input_error.h"
#include "src/task.h"
#include "src/weight_file.h"

namespace sinkcert::theorems::exact {

namespace {

// Part 1 of every certificate (checked with Coq 8.16).
const char* const kGeneric = R"coq(
From Coq Require Import Reals QArith Qreals List Lia.
(* lia would otherwise write a cache file .lia.cache into the current folder *)
Unset Lia Cache.

(* ==== Part 1: the statement's definitions, a checker over Q, and its
   soundness, for any n, L, number of heads nh and rational weights
   Aq h p q = A^h[p][q], Mq h d e = M^h[d][e] (positions and coordinates
   are 0-indexed; position 0 is BOS). ==== *)

Section Model.
Variables (n L nh : nat) (Aq Mq : nat -> nat -> nat -> Q) (count_all residual : bool).

Open Scope R_scope.

(* ---- The statement's definitions (over R) ---- *)

(* rsum m f = f 0 + f 1 + ... + f (m - 1) *)
Fixpoint rsum (m : nat) (f : nat -> R) : R :=
  match m with O => 0 | S m' => rsum m' f + f m' end.

(* content coordinates 2 .. n-2 *)
Definition content (d : nat) : bool := (2 <=? d)%nat && (d <? n - 1)%nat.
(* the content coordinates of a position k >= 1 (BOS has none) *)
Definition is_content (k d : nat) : bool := (1 <=? k)%nat && content d.

(* the flag part of token k when the trigger is at j *)
Definition flag (j k d : nat) : Q :=
  if (k =? 0)%nat then (if (d =? 0)%nat then 1 else 0)%Q
  else if (d =? 1)%nat then (if (k =? j)%nat then 1 else 0)%Q
  else if (d =? n - 1)%nat then (if (k =? j)%nat then 0 else 1)%Q
  else 0%Q.

(* x_k[d]: the content variable c k d at a content coordinate, else the flag *)
Definition token (j : nat) (c : nat -> nat -> R) (k d : nat) : R :=
  if is_content k d then c k d else Q2R (flag j k d).

(* s^h_ik = x_i^T A^h x_k *)
Definition score (h j : nat) (c : nat -> nat -> R) (i k : nat) : R :=
  rsum n (fun p => rsum n (fun q => token j c i p * Q2R (Aq h p q) * token j c k q)).

Definition divisor (i : nat) : nat := if count_all then S i else Nat.max i 1.

(* a^h_ik = relu(s^h_ik) / max(i, 1)  (count_all: / (i + 1)) *)
Definition attn (h j : nat) (c : nat -> nat -> R) (i k : nat) : R :=
  Rmax 0 (score h j c i k) / INR (divisor i).

(* f(X)_{i,d} = [x_i[d]] + sum_h sum_{k<=i} a^h_ik (M^h x_k)[d] *)
Definition output (j : nat) (c : nat -> nat -> R) (i d : nat) : R :=
  (if residual then token j c i d else 0) +
  rsum nh (fun h => rsum (S i) (fun k =>
    attn h j c i k * rsum n (fun e => Q2R (Mq h d e) * token j c k e))).

(* y_{i,d} = [x_i[d]] + (i = j ? (1/j) sum_{k=1..j} x_k[d] : 0) *)
Definition target (j : nat) (c : nat -> nat -> R) (i d : nat) : R :=
  (if residual then token j c i d else 0) +
  (if (i =? j)%nat then / INR j * rsum j (fun m => token j c (S m) d) else 0).

(* ---- The checker, over Q ---- *)
Close Scope R_scope.
Open Scope Q_scope.

Fixpoint qsum (m : nat) (f : nat -> Q) : Q :=
  match m with O => 0%Q | S m' => Qred (qsum m' f + f m') end.

Fixpoint all_below (m : nat) (f : nat -> bool) : bool :=
  match m with O => true | S m' => all_below m' f && f m' end.

Definition memo {T : Type} (dflt : T) (m : nat) (f : nat -> T) : nat -> T :=
  let l := map f (seq 0 m) in fun k => nth k l dflt.

Definition qrelu (s : Q) : Q := if Qle_bool s 0 then 0%Q else s.

Definition qscore (h j i k : nat) : Q :=
  qsum n (fun p => qsum n (fun q => flag j i p * Aq h p q * flag j k q)).

Definition qattn (h j i k : nat) : Q :=
  Qred (qrelu (qscore h j i k) * / inject_Z (Z.of_nat (divisor i))).

Definition qtarget (j i d k e : nat) : Q :=
  if (i =? j)%nat && (1 <=? k)%nat && (e =? d)%nat then / inject_Z (Z.of_nat j) else 0%Q.

(* the coefficient of x_k[e] in output_{i,d} - target_{i,d}; a h k = a^h_ik *)
Definition coef (a : nat -> nat -> Q) (j i d k e : nat) : Q :=
  Qred (qsum nh (fun h => a h k * Mq h d e) - qtarget j i d k e).

Definition row_ok (a : nat -> nat -> Q) (j i d : nat) : bool :=
  Qeq_bool (qsum (S i) (fun k => qsum n (fun e =>
      if is_content k e then 0%Q else coef a j i d k e * flag j k e))) 0 &&
  all_below (S i) (fun k => all_below n (fun e =>
      negb (is_content k e) || Qeq_bool (coef a j i d k e) 0)).

Definition scores_flag_only : bool :=
  all_below nh (fun h => all_below n (fun p => all_below n (fun q =>
    Qeq_bool (Aq h p q) 0 || (negb (content p) && (negb (content q) || (p =? 0)%nat))))).

Definition attn_table (j i : nat) : nat -> nat -> Q :=
  memo (fun _ => 0%Q) nh (fun h => memo 0%Q (S i) (fun k => qattn h j i k)).

Definition check (jmin : nat) : bool :=
  (3 <=? n)%nat && (1 <=? jmin)%nat && scores_flag_only &&
  all_below L (fun j => (j <? jmin)%nat || all_below L (fun i =>
    let a := attn_table j i in
    all_below n (fun d => row_ok a j i d) &&
    ((i =? 0)%nat || all_below nh (fun h => Qeq_bool (a h 0%nat) 0)))).

Definition qtoken (cq : nat -> nat -> Q) (j k d : nat) : Q :=
  if is_content k d then cq k d else flag j k d.

Definition qerror (cq : nat -> nat -> Q) (j i d : nat) : Q :=
  let a := attn_table j i in
  qsum (S i) (fun k => qsum n (fun e => coef a j i d k e * qtoken cq j k e)).

(* ---- Soundness ---- *)
Close Scope Q_scope.
Open Scope R_scope.

Lemma rsum_S : forall m f, rsum (S m) f = rsum m f + f m.
Proof. reflexivity. Qed.

Lemma rsum_ext : forall m f g, (forall k, (k < m)%nat -> f k = g k) -> rsum m f = rsum m g.
Proof.
  induction m; intros f g E; [reflexivity|].
  rewrite !rsum_S, (IHm f g) by (intros; apply E; lia). rewrite E by lia. reflexivity.
Qed.

Lemma rsum_zero : forall m f, (forall k, (k < m)%nat -> f k = 0) -> rsum m f = 0.
Proof.
  induction m; intros f E; [reflexivity|].
  rewrite rsum_S, IHm, E by (intros; try apply E; lia). ring.
Qed.

Lemma rsum_plus : forall m f g, rsum m (fun k => f k + g k) = rsum m f + rsum m g.
Proof. induction m; intros; [simpl; ring|]. rewrite !rsum_S, IHm. ring. Qed.

Lemma rsum_minus : forall m f g, rsum m (fun k => f k - g k) = rsum m f - rsum m g.
Proof. induction m; intros; [simpl; ring|]. rewrite !rsum_S, IHm. ring. Qed.

Lemma rsum_scal : forall m a f, a * rsum m f = rsum m (fun k => a * f k).
Proof. induction m; intros; [simpl; ring|]. rewrite !rsum_S, <- IHm. ring. Qed.

Lemma rsum_scal_r : forall m a f, rsum m f * a = rsum m (fun k => f k * a).
Proof. induction m; intros; [simpl; ring|]. rewrite !rsum_S, <- IHm. ring. Qed.

Lemma rsum_swap : forall m1 m2 f,
  rsum m1 (fun a => rsum m2 (fun b => f a b)) = rsum m2 (fun b => rsum m1 (fun a => f a b)).
Proof.
  induction m1; intros.
  - symmetry. apply rsum_zero. reflexivity.
  - rewrite rsum_S, IHm1, <- rsum_plus. reflexivity.
Qed.

Lemma rsum_shift : forall m f, rsum (S m) f = f 0%nat + rsum m (fun k => f (S k)).
Proof.
  induction m; intros; [simpl; ring|].
  rewrite (rsum_S (S m)), IHm, (rsum_S m). ring.
Qed.

Lemma rsum_delta : forall m d a (f : nat -> R), (d < m)%nat ->
  rsum m (fun e => (if (e =? d)%nat then a else 0) * f e) = a * f d.
Proof.
  induction m; intros d a f Hd; [lia|].
  rewrite rsum_S. destruct (Nat.eqb_spec m d).
  - subst d. rewrite rsum_zero; [ring|].
    intros k Hk. destruct (Nat.eqb_spec k m); [lia|ring].
  - rewrite IHm by lia. ring.
Qed.

Lemma Q2R_0 : Q2R 0 = 0.
Proof. unfold Q2R. simpl. field. Qed.

Lemma Q2R_Qred : forall q, Q2R (Qred q) = Q2R q.
Proof. intros. apply Qeq_eqR, Qred_correct. Qed.

Lemma Q2R_inject_Z_nat : forall m, Q2R (inject_Z (Z.of_nat m)) = INR m.
Proof. intros. rewrite INR_IZR_INZ. unfold Q2R, inject_Z. simpl. field. Qed.

Lemma Q2R_eq_0 : forall q, Qeq_bool q 0 = true -> Q2R q = 0.
Proof. intros q E. apply Qeq_bool_iff, Qeq_eqR in E. rewrite E. apply Q2R_0. Qed.

Lemma Q2R_inv_nat : forall m, (1 <= m)%nat -> Q2R (/ inject_Z (Z.of_nat m)) = / INR m.
Proof.
  intros m Hm. rewrite Q2R_inv, Q2R_inject_Z_nat; [reflexivity|].
  intro E. apply Qeq_eqR in E. rewrite Q2R_inject_Z_nat, Q2R_0 in E.
  apply (not_0_INR m); [lia | exact E].
Qed.

Lemma qsum_R : forall m f, Q2R (qsum m f) = rsum m (fun k => Q2R (f k)).
Proof.
  induction m; intros; [apply Q2R_0|].
  change (qsum (S m) f) with (Qred (qsum m f + f m)%Q). rewrite Q2R_Qred, Q2R_plus, IHm. reflexivity.
Qed.

Lemma all_below_spec : forall m f, all_below m f = true -> forall k, (k < m)%nat -> f k = true.
Proof.
  induction m; intros f E k Hk; [lia|].
  simpl in E. apply andb_prop in E as [E1 E2].
  destruct (Nat.eq_dec k m); [subst; exact E2 | apply IHm; [exact E1 | lia]].
Qed.

Lemma memo_spec : forall T (dflt : T) m f k, (k < m)%nat -> memo dflt m f k = f k.
Proof.
  intros. unfold memo.
  rewrite nth_indep with (d' := f 0%nat) by (rewrite map_length, seq_length; lia).
  rewrite map_nth, seq_nth by lia. reflexivity.
Qed.

Lemma token_flag : forall j c k d, is_content k d = false -> token j c k d = Q2R (flag j k d).
Proof. intros j c k d E. unfold token. rewrite E. reflexivity. Qed.

Lemma relu_R : forall s, Rmax 0 (Q2R s) = Q2R (qrelu s).
Proof.
  intros. unfold qrelu. destruct (Qle_bool s 0) eqn:E.
  - apply Qle_bool_iff, Qle_Rle in E. rewrite Q2R_0 in *. apply Rmax_left. exact E.
  - apply Rmax_right. rewrite <- Q2R_0. apply Qle_Rle.
    apply Qlt_le_weak, Qnot_le_lt. intro F. apply Qle_bool_iff in F. congruence.
Qed.

Lemma score_R : (3 <= n)%nat -> scores_flag_only = true ->
  forall h j c i k, (h < nh)%nat -> (k <= i)%nat -> score h j c i k = Q2R (qscore h j i k).
Proof.
  intros Hn Hs h j c i k Hh Hk. unfold score, qscore.
  rewrite qsum_R. apply rsum_ext. intros p Hp.
  rewrite qsum_R. apply rsum_ext. intros q Hq.
  pose proof (all_below_spec _ _ (all_below_spec _ _
    (all_below_spec _ _ Hs h Hh) p Hp) q Hq) as C. cbv beta in C.
  rewrite !Q2R_mult.
  destruct (Qeq_bool (Aq h p q) 0) eqn:EA.
  - rewrite (Q2R_eq_0 _ EA). ring.
  - simpl in C. apply andb_prop in C as [Cp Cq]. apply negb_true_iff in Cp.
    rewrite (token_flag j c i p) by (unfold is_content; rewrite Cp; apply andb_false_r).
    apply orb_prop in Cq as [Cq | Cq].
    + apply negb_true_iff in Cq.
      rewrite (token_flag j c k q) by (unfold is_content; rewrite Cq; apply andb_false_r).
      reflexivity.
    + apply Nat.eqb_eq in Cq. subst p. destruct i as [|i].
      * assert (k = 0%nat) by lia. subst k.
        rewrite token_flag by reflexivity. reflexivity.
      * replace (flag j (S i) 0) with 0%Q.
        -- rewrite Q2R_0. ring.
        -- unfold flag. simpl. destruct (n - 1)%nat eqn:En; [lia | reflexivity].
Qed.

Lemma divisor_pos : forall i, (1 <= divisor i)%nat.
Proof. intros. unfold divisor. destruct count_all; lia. Qed.

Lemma attn_R : (3 <= n)%nat -> scores_flag_only = true ->
  forall h j c i k, (h < nh)%nat -> (k <= i)%nat -> attn h j c i k = Q2R (qattn h j i k).
Proof.
  intros Hn Hs h j c i k Hh Hk. unfold attn, qattn.
  rewrite Q2R_Qred, Q2R_mult, Q2R_inv_nat by apply divisor_pos.
  rewrite (score_R Hn Hs), relu_R by assumption. reflexivity.
Qed.

Lemma error_R : (3 <= n)%nat -> scores_flag_only = true ->
  forall j i d (a : nat -> nat -> Q), (1 <= j)%nat -> (d < n)%nat ->
  (forall h k, (h < nh)%nat -> (k <= i)%nat -> a h k = qattn h j i k) ->
  forall c, output j c i d - target j c i d =
    rsum (S i) (fun k => rsum n (fun e => Q2R (coef a j i d k e) * token j c k e)).
Proof.
  intros Hn Hs j i d a Hj Hd Ha c. unfold output, target.
  assert (EA : rsum nh (fun h => rsum (S i) (fun k =>
      attn h j c i k * rsum n (fun e => Q2R (Mq h d e) * token j c k e))) =
    rsum (S i) (fun k => rsum n (fun e =>
      Q2R (qsum nh (fun h => a h k * Mq h d e)%Q) * token j c k e))).
  { rewrite (rsum_ext nh _ (fun h => rsum (S i) (fun k => rsum n (fun e =>
        Q2R (a h k * Mq h d e)%Q * token j c k e)))).
    - rewrite rsum_swap. apply rsum_ext. intros k Hk.
      rewrite rsum_swap. apply rsum_ext. intros e He.
      rewrite qsum_R, rsum_scal_r. reflexivity.
    - intros h Hh. apply rsum_ext. intros k Hk.
      rewrite rsum_scal. apply rsum_ext. intros e He.
      rewrite (attn_R Hn Hs), <- Ha, Q2R_mult by lia. ring. }
  assert (EB : (if (i =? j)%nat then / INR j * rsum j (fun m => token j c (S m) d) else 0) =
    rsum (S i) (fun k => rsum n (fun e => Q2R (qtarget j i d k e) * token j c k e))).
  { destruct (Nat.eqb_spec i j) as [E | E].
    - subst i. rewrite rsum_shift.
      rewrite (rsum_zero n (fun e => Q2R (qtarget j j d 0 e) * token j c 0 e)).
      2: { intros e He. unfold qtarget. rewrite Nat.eqb_refl. simpl. rewrite Q2R_0. ring. }
      rewrite (rsum_ext j (fun k => rsum n (fun e => Q2R (qtarget j j d (S k) e) * token j c (S k) e))
        (fun k => Q2R (/ inject_Z (Z.of_nat j))%Q * token j c (S k) d)).
      + rewrite <- (rsum_scal j (Q2R (/ inject_Z (Z.of_nat j))%Q) (fun k => token j c (S k) d)).
        rewrite Q2R_inv_nat by exact Hj. ring.
      + intros k Hk. rewrite <- rsum_delta with (m := n) by exact Hd.
        apply rsum_ext. intros e He. unfold qtarget. rewrite Nat.eqb_refl. simpl.
        destruct (e =? d)%nat; [reflexivity | rewrite Q2R_0; reflexivity].
    - symmetry. apply rsum_zero. intros k Hk. apply rsum_zero. intros e He.
      unfold qtarget. apply Nat.eqb_neq in E. rewrite E. simpl. rewrite Q2R_0. ring. }
  rewrite EA, EB.
  transitivity (rsum (S i) (fun k => rsum n (fun e =>
      Q2R (qsum nh (fun h => a h k * Mq h d e)%Q) * token j c k e)) -
    rsum (S i) (fun k => rsum n (fun e => Q2R (qtarget j i d k e) * token j c k e))).
  { ring. }
  rewrite <- rsum_minus. apply rsum_ext. intros k Hk.
  rewrite <- rsum_minus. apply rsum_ext. intros e He.
  unfold coef. rewrite Q2R_Qred, Q2R_minus. ring.
Qed.

Lemma row_sound : (3 <= n)%nat -> scores_flag_only = true ->
  forall j i d (a : nat -> nat -> Q), (1 <= j)%nat -> (d < n)%nat ->
  (forall h k, (h < nh)%nat -> (k <= i)%nat -> a h k = qattn h j i k) ->
  row_ok a j i d = true -> forall c, output j c i d = target j c i d.
Proof.
  intros Hn Hs j i d a Hj Hd Ha R c. apply Rminus_diag_uniq.
  rewrite (error_R Hn Hs j i d a Hj Hd Ha c).
  unfold row_ok in R. apply andb_prop in R as [Rc Rz].
  apply Q2R_eq_0 in Rc. rewrite qsum_R in Rc. rewrite <- Rc.
  apply rsum_ext. intros k Hk. rewrite qsum_R. apply rsum_ext. intros e He.
  pose proof (all_below_spec _ _ (all_below_spec _ _ Rz k Hk) e He) as Z. cbv beta in Z.
  destruct (is_content k e) eqn:E.
  - simpl in Z. rewrite (Q2R_eq_0 _ Z), Q2R_0. ring.
  - rewrite token_flag, Q2R_mult by exact E. reflexivity.
Qed.

Lemma attn_table_spec : forall j i h k, (h < nh)%nat -> (k <= i)%nat ->
  attn_table j i h k = qattn h j i k.
Proof. intros. unfold attn_table. rewrite !memo_spec by lia. reflexivity. Qed.

Theorem check_sound : forall jmin, check jmin = true ->
  forall j, (jmin <= j < L)%nat -> forall c : nat -> nat -> R,
    (forall i d, (i < L)%nat -> (d < n)%nat -> output j c i d = target j c i d) /\
    (forall h i, (h < nh)%nat -> (1 <= i < L)%nat -> attn h j c i 0 = 0).
Proof.
  intros jmin K j Hj c. unfold check in K.
  apply andb_prop in K as [K Kall]. apply andb_prop in K as [K Hs].
  apply andb_prop in K as [Hn Hjmin].
  apply Nat.leb_le in Hn. apply Nat.leb_le in Hjmin.
  pose proof (all_below_spec _ _ Kall j (proj2 Hj)) as Kj. simpl in Kj.
  destruct (Nat.ltb_spec j jmin) as [F|_]; [lia|]. simpl in Kj.
  assert (Ki : forall i, (i < L)%nat ->
    all_below n (fun d => row_ok (attn_table j i) j i d) &&
    ((i =? 0)%nat || all_below nh (fun h => Qeq_bool (attn_table j i h 0%nat) 0)) = true).
  { intros i Hi. exact (all_below_spec _ _ Kj i Hi). }
  split.
  - intros i d Hi Hd. specialize (Ki i Hi). apply andb_prop in Ki as [Kd _].
    apply (row_sound Hn Hs j i d (attn_table j i)); [lia | exact Hd | | ].
    + intros. apply attn_table_spec; assumption.
    + exact (all_below_spec _ _ Kd d Hd).
  - intros h i Hh Hi. specialize (Ki i (proj2 Hi)). apply andb_prop in Ki as [_ Kb].
    destruct (Nat.eqb_spec i 0) as [E|_]; [lia|]. simpl in Kb.
    pose proof (all_below_spec _ _ Kb h Hh) as Z. cbv beta in Z.
    rewrite (attn_R Hn Hs) by lia. rewrite <- attn_table_spec by lia.
    exact (Q2R_eq_0 _ Z).
Qed.

Lemma witness_error : (3 <=? n)%nat && scores_flag_only = true ->
  forall j i d cq, (1 <= j)%nat -> (d < n)%nat ->
  output j (fun k e => Q2R (cq k e)) i d - target j (fun k e => Q2R (cq k e)) i d =
  Q2R (qerror cq j i d).
Proof.
  intros K j i d cq Hj Hd. apply andb_prop in K as [Hn Hs]. apply Nat.leb_le in Hn.
  rewrite (error_R Hn Hs j i d (attn_table j i) Hj Hd) by (intros; apply attn_table_spec; assumption).
  unfold qerror. rewrite qsum_R. apply rsum_ext. intros k Hk.
  rewrite qsum_R. apply rsum_ext. intros e He.
  rewrite Q2R_mult. unfold token, qtoken. destruct (is_content k e); reflexivity.
Qed.

Lemma witness_bos : (3 <=? n)%nat && scores_flag_only = true ->
  forall h j c i, (h < nh)%nat -> attn h j c i 0 = Q2R (qattn h j i 0).
Proof.
  intros K h j c i Hh. apply andb_prop in K as [Hn Hs]. apply Nat.leb_le in Hn.
  apply (attn_R Hn Hs); [exact Hh | lia].
Qed.

End Model.

(* ---- A concrete input's content lies in the box [-1, 1] ---- *)

Definition in_box (X : list (list Q)) : bool :=
  forallb (forallb (fun x => Qle_bool (-1) x && Qle_bool x 1)) X.

Lemma in_box_spec : forall X, in_box X = true ->
  forall k d, (-1 <= Q2R (nth d (nth k X nil) 0%Q) <= 1)%R.
Proof.
  intros X HX k d.
  assert (Hx : Qle_bool (-1) (nth d (nth k X nil) 0%Q) && Qle_bool (nth d (nth k X nil) 0%Q) 1 = true).
  { destruct (Nat.lt_ge_cases k (length X)) as [Hk|Hk].
    - pose proof (proj1 (forallb_forall _ X) HX _ (nth_In X nil Hk)) as Hrow.
      destruct (Nat.lt_ge_cases d (length (nth k X nil))) as [Hd|Hd].
      + exact (proj1 (forallb_forall _ _) Hrow _ (nth_In _ 0%Q Hd)).
      + rewrite nth_overflow by exact Hd. reflexivity.
    - rewrite (nth_overflow X nil Hk). destruct d; reflexivity. }
  apply andb_prop in Hx as [H1 H2]. apply Qle_bool_iff, Qle_Rle in H1, H2.
  assert (E1 : Q2R 1 = 1%R) by (unfold Q2R; simpl; field).
  assert (Em1 : Q2R (-1) = (-1)%R) by (unfold Q2R; simpl; field).
  rewrite E1 in H2. rewrite Em1 in H1. split; assumption.
Qed.
)coq";

std::string nat(int v) { return std::to_string(v); }

// [[r00; r01; ..]; [r10; ..]; ..] in Q.
std::string coq_matrix(const Matrix<Rational>& m, const std::string& indent) {
  std::ostringstream s;
  s << "[";
  for (int r = 0; r < m.rows(); ++r) {
    if (r > 0) s << ";\n" << indent << " ";
    s << "[";
    for (int c = 0; c < m.cols(); ++c) s << (c > 0 ? "; " : "") << coq_rational(m(r, c));
    s << "]";
  }
  s << "]";
  return s.str();
}

// The value v as a real literal: IZR p / IZR q.
std::string coq_real(const Rational& r) {
  return "IZR (" + bmp::numerator(r).str() + ") / IZR (" + bmp::denominator(r).str() + ")";
}

// For a weight file with factored heads: the factors as the file gives them
// and the theorem that A^h = W_Q^T W_K and M^h = W_O W_V, by reflection.
std::string factor_part(const WeightFile& file, const std::string& n, const std::string& nh) {
  const std::vector<HeadWeights>& heads = file.layers.at(0);
  bool any = false;
  for (const HeadWeights& h : heads) any = any || h.factored;
  if (!any) return "";
  std::ostringstream s;
  s << "(* The weight file gives these heads as factors W_Q, W_K (d_k x n), W_V (d_v x n),\n"
    << "   W_O (n x d_v), rows = outputs (y = W x); factored[h] says which heads. *)\n"
    << "Open Scope Q_scope.\n"
    << "Definition factored : list bool := [";
  for (std::size_t h = 0; h < heads.size(); ++h) {
    s << (h > 0 ? "; " : "") << (heads[h].factored ? "true" : "false");
  }
  s << "].\n";
  const std::pair<const char*, Matrix<Rational> HeadWeights::*> factors[] = {
      {"WQ", &HeadWeights::W_Q},
      {"WK", &HeadWeights::W_K},
      {"WV", &HeadWeights::W_V},
      {"WO", &HeadWeights::W_O}};
  for (const auto& [name, member] : factors) {
    s << "Definition " << name << "_data : list (list (list Q)) := [\n";
    for (std::size_t h = 0; h < heads.size(); ++h) {
      s << "  " << (heads[h].factored ? coq_matrix(heads[h].*member, "  ") : std::string("[]"))
        << (h + 1 < heads.size() ? ";\n" : "\n");
    }
    s << "].\n";
  }
  s << "Definition entry (D : list (list (list Q))) (h r c : nat) : Q :=\n"
    << "  nth c (nth r (nth h D nil) nil) 0.\n"
    << "Definition rows (D : list (list (list Q))) (h : nat) : nat := length (nth h D nil).\n\n"
    << "Lemma products_checked : all_below " << nh << " (fun h => negb (nth h factored false) ||\n"
    << "  all_below " << n << " (fun p => all_below " << n << " (fun q =>\n"
    << "    Qeq_bool (Aq h p q) (qsum (rows WQ_data h)\n"
    << "      (fun r => entry WQ_data h r p * entry WK_data h r q)) &&\n"
    << "    Qeq_bool (Mq h p q) (qsum (rows WV_data h)\n"
    << "      (fun r => entry WO_data h p r * entry WV_data h r q))))) = true.\n"
    << "Proof. vm_cast_no_check (eq_refl true). Qed.\n"
    << "Close Scope Q_scope.\n\n"
    << "(* For every factored head, A^h = W_Q^T W_K and M^h = W_O W_V exactly. *)\n"
    << "Theorem weights_are_the_files_products : forall h p q, (h < " << nh
    << ")%nat -> nth h factored false = true ->\n"
    << "  (p < " << n << ")%nat -> (q < " << n << ")%nat ->\n"
    << "  Q2R (Aq h p q) =\n"
    << "    rsum (rows WQ_data h) (fun r => Q2R (entry WQ_data h r p) * Q2R (entry WK_data h r q)) "
       "/\\\n"
    << "  Q2R (Mq h p q) =\n"
    << "    rsum (rows WV_data h) (fun r => Q2R (entry WO_data h p r) * Q2R (entry WV_data h r "
       "q)).\n"
    << "Proof.\n"
    << "  intros h p q Hh Hf Hp Hq.\n"
    << "  pose proof (all_below_spec _ _ products_checked h Hh) as K. cbv beta in K.\n"
    << "  rewrite Hf in K. cbn [negb orb] in K.\n"
    << "  pose proof (all_below_spec _ _ (all_below_spec _ _ K p Hp) q Hq) as K2. cbv beta in K2.\n"
    << "  apply andb_prop in K2 as [KA KM].\n"
    << "  apply Qeq_bool_iff, Qeq_eqR in KA. apply Qeq_bool_iff, Qeq_eqR in KM.\n"
    << "  rewrite KA, KM, !qsum_R. split; apply rsum_ext; intros; apply Q2R_mult.\n"
    << "Qed.\n\n"
    << "Print Assumptions weights_are_the_files_products.\n\n";
  return s.str();
}

std::string header(const ReluCertificate& cert, const RunInfo& info, bool force_theorem) {
  const Task& task = cert.task;
  const std::vector<int> js = task.trigger_positions();
  std::ostringstream s;
  s << "(* Theorem 3 of Ran-Milo, \"Attention Sinks Are Provably Necessary in Softmax\n"
    << "   Transformers\", for one ReLU model, checked by Coq 8.16:  coqc FILE.v\n"
    << "   (FILE a Coq module name). Written by sinkcert:\n"
    << "     command: " << info.command_line << "\n"
    << "     revision: " << info.revision << ", time: " << info.time_utc << "\n"
    << "     model: " << cert.model_summary << "\n"
    << "     task: T(n = " << task.n << ", L = " << task.L << "), " << to_string(task.range)
    << " convention, trigger j in {" << js.front() << ".." << js.back() << "}\n"
    << "     sinkcert's exact verdict: " << to_string(cert.verdict) << "\n";
  if (cert.verdict == Verdict::kVerified || force_theorem) {
    s << "   The last theorem, theorem3, says: for every trigger position j and every\n"
      << "   real content c k d in [-1, 1] (k >= 1, d in 2..n-2), the model's output\n"
      << "   equals the target at every position i and coordinate d, and every head's\n"
      << "   attention a h j c i 0 on BOS is 0 at every position i >= 1.\n";
    if (cert.verdict != Verdict::kVerified) {
      s << "   DEBUG EXPORT (--coq-force-theorem): sinkcert did NOT verify this model,\n"
        << "   so coqc is expected to reject the proof of theorem3.\n";
    }
  } else {
    s << "   The last theorem, witness, says: at the exact input X_witness (content in\n"
      << "   [-1, 1]) the claim of Theorem 3 fails by the exact nonzero value stated.\n";
  }
  s << "   Part 1 below is the same in every certificate: the definitions the\n"
    << "   statement uses, a checker over Q and its soundness proof; Part 2 holds\n"
    << "   this model's exact weights and the theorem, proved by running the\n"
    << "   checker (vm_compute). coqc prints the axioms the theorem depends on:\n"
    << "   only the classical axioms of Coq's standard real numbers. *)\n";
  return s.str();
}

}  // namespace

std::string coq_unsupported_reason(const Model<Rational>& model) {
  if (model.num_layers() != 1) {
    return "the model has " + std::to_string(model.num_layers()) +
           " layers; the Coq statement covers one layer";
  }
  if (model.attention != AttentionKind::kRelu && model.attention != AttentionKind::kReluCountAll) {
    return to_string(model.attention) +
           " attention: the Coq statement covers relu and relu-count-all attention";
  }
  return "";
}

void check_coq_file_name(const std::string& path, const std::string& option) {
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  bool ok = name.size() > 2 && name.compare(name.size() - 2, 2, ".v") == 0 &&
            std::isalpha(static_cast<unsigned char>(name[0]));
  for (std::size_t i = 0; ok && i + 2 < name.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(name[i]);
    ok = std::isalnum(ch) || ch == '_';
  }
  if (!ok) {
    throw InputError(
        option, path,
        "expected a file name NAME.v with NAME a letter followed by letters, digits or '_' "
        "(coqc takes NAME as the module name)");
  }
}

std::string coq_rational(const Rational& r) {
  if (r == 0) return "0";
  return "(" + bmp::numerator(r).str() + " # " + bmp::denominator(r).str() + ")";
}

CoqCertificate coq_certificate(const Model<Rational>& model, const ReluCertificate& cert,
                               const RunInfo& info, bool force_theorem, const WeightFile* file) {
  const std::string unsupported = coq_unsupported_reason(model);
  if (!unsupported.empty()) throw std::invalid_argument(unsupported);
  if ((cert.verdict == Verdict::kUndecided || cert.verdict == Verdict::kNotApplicable) &&
      !force_theorem) {
    throw std::invalid_argument("the verdict is " + to_string(cert.verdict) + " (" + cert.reason +
                                "): there is no theorem to write");
  }
  const Task& task = cert.task;
  const std::vector<int> js = task.trigger_positions();
  if (js.empty() || model.n != task.n || js.back() != task.L - 1 ||
      js.back() - js.front() + 1 != static_cast<int>(js.size())) {
    throw std::invalid_argument("coq export: the certificate does not match the model and task");
  }
  const std::vector<Head<Rational>>& heads = model.layers[0];
  const int H = static_cast<int>(heads.size());
  if (file != nullptr && (file->num_layers() != 1 || file->num_heads() != H)) {
    throw std::invalid_argument("coq export: the weight file does not match the model");
  }
  const std::string n = nat(task.n), L = nat(task.L), nh = nat(H);
  const std::string count_all = model.attention == AttentionKind::kReluCountAll ? "true" : "false";
  const std::string residual = model.kind == ModelKind::kResidual ? "true" : "false";

  std::ostringstream s;
  s << header(cert, info, force_theorem) << kGeneric;
  s << "\n(* ==== Part 2: this model ==== *)\n\n"
    << "Import ListNotations.\nOpen Scope Q_scope.\n\n"
    << "(* A^h and M^h of head h (s_ik = x_i^T A^h x_k, value M^h x_k), exact rationals\n"
    << "   (p # q = p/q): A_data[h][p][q] = A^h[p][q], M_data[h][d][e] = M^h[d][e]. *)\n";
  for (const char* which : {"A", "M"}) {
    s << "Definition " << which << "_data : list (list (list Q)) := [\n";
    for (int h = 0; h < H; ++h) {
      const Matrix<Rational>& m = which[0] == 'A' ? heads[h].A : heads[h].M;
      s << "  " << coq_matrix(m, "  ") << (h + 1 < H ? ";\n" : "\n");
    }
    s << "].\n";
  }
  s << "Definition Aq (h p q : nat) : Q := nth q (nth p (nth h A_data nil) nil) 0.\n"
    << "Definition Mq (h d e : nat) : Q := nth e (nth d (nth h M_data nil) nil) 0.\n\n"
    << "Close Scope Q_scope.\nOpen Scope R_scope.\n\n";
  if (file != nullptr) s << factor_part(*file, n, nh);
  s << "(* This model on T(n = " << n << ", L = " << L << "): the token x, the output f, the\n"
    << "   target y and the attention a of Part 1, for this model's weights\n"
    << "   (count_all = " << count_all << ": relu divides by "
    << (count_all == "true" ? "i + 1" : "max(i, 1)") << "; residual = " << residual
    << (residual == "true" ? ": f = x + heads, y = x + mean" : ": the plain target") << "). *)\n"
    << "Definition x (j : nat) (c : nat -> nat -> R) (k d : nat) : R := token " << n
    << " j c k d.\n"
    << "Definition f (j : nat) (c : nat -> nat -> R) (i d : nat) : R :=\n"
    << "  output " << n << " " << nh << " Aq Mq " << count_all << " " << residual << " j c i d.\n"
    << "Definition y (j : nat) (c : nat -> nat -> R) (i d : nat) : R := target " << n << " "
    << residual << " j c i d.\n"
    << "Definition a (h j : nat) (c : nat -> nat -> R) (i k : nat) : R :=\n"
    << "  attn " << n << " Aq " << count_all << " h j c i k.\n\n";

  const bool theorem = cert.verdict == Verdict::kVerified || force_theorem;
  if (theorem) {
    const std::string jmin = nat(js.front());
    s << "Lemma checked : check " << n << " " << L << " " << nh << " Aq Mq " << count_all << " "
      << jmin << " = true.\n"
      << "Proof. vm_cast_no_check (eq_refl true). Qed.\n\n"
      << "Theorem theorem3 : forall j : nat, (" << jmin << " <= j < " << L << ")%nat ->\n"
      << "  forall c : nat -> nat -> R, (forall k d, -1 <= c k d <= 1) ->\n"
      << "  (forall i d, (i < " << L << ")%nat -> (d < " << n
      << ")%nat -> f j c i d = y j c i d) /\\\n"
      << "  (forall h i, (h < " << nh << ")%nat -> (1 <= i < " << L
      << ")%nat -> a h j c i 0 = 0).\n"
      << "Proof.\n"
      << "  intros j Hj c _.\n"
      << "  exact (check_sound " << n << " " << L << " " << nh << " Aq Mq " << count_all << " "
      << residual << " " << jmin << " checked j Hj c).\n"
      << "Qed.\n\n"
      << "Print Assumptions theorem3.\n";
    return {s.str(), "theorem3"};
  }

  const ReluWitness& w = *cert.witness;
  const std::string j = nat(w.trigger), i = nat(w.position);
  s << "Open Scope Q_scope.\n"
    << "(* The witness input X (L x n, rows = positions); its content is c_witness. *)\n"
    << "Definition X_witness : list (list Q) :=\n  " << coq_matrix(w.X, "  ") << ".\n"
    << "Close Scope Q_scope.\n"
    << "Definition c_witness (k d : nat) : R := Q2R (nth d (nth k X_witness nil) 0%Q).\n\n";
  const std::string value = coq_real(w.value);
  if (w.kind == ReluWitness::Kind::kError) {
    const std::string d = nat(w.coordinate);
    s << "Lemma witness_checked :\n"
      << "  ((3 <=? " << n << ")%nat && scores_flag_only " << n << " " << nh << " Aq) = true /\\\n"
      << "  in_box X_witness = true /\\\n"
      << "  Qeq_bool (qerror " << n << " " << nh << " Aq Mq " << count_all
      << " (fun k d => nth d (nth k X_witness nil) 0%Q) " << j << " " << i << " " << d << ")\n"
      << "    " << coq_rational(w.value) << " = true.\n"
      << "Proof. split; [|split]; vm_cast_no_check (eq_refl true). Qed.\n\n"
      << "(* At trigger j = " << j << ", the output minus the target at position i = " << i
      << ",\n   coordinate d = " << d << " is " << rational_string(w.value) << ". *)\n"
      << "Theorem witness : (forall k d, -1 <= c_witness k d <= 1) /\\\n"
      << "  f " << j << " c_witness " << i << " " << d << " - y " << j << " c_witness " << i << " "
      << d << " = " << value << " /\\\n"
      << "  " << value << " <> 0.\n"
      << "Proof.\n"
      << "  destruct witness_checked as [K [B E]]. split; [|split].\n"
      << "  - exact (in_box_spec X_witness B).\n"
      << "  - unfold f, y, c_witness. etransitivity.\n"
      << "    { apply (witness_error " << n << " " << nh << " Aq Mq " << count_all << " "
      << residual << " K " << j << " " << i << " " << d
      << " (fun k d => nth d (nth k X_witness nil) 0%Q)); lia. }\n"
      << "    rewrite (Qeq_eqR _ _ (proj1 (Qeq_bool_iff _ _) E)). reflexivity.\n";
  } else {
    const std::string h = nat(w.head);
    s << "Lemma witness_checked :\n"
      << "  ((3 <=? " << n << ")%nat && scores_flag_only " << n << " " << nh << " Aq) = true /\\\n"
      << "  in_box X_witness = true /\\\n"
      << "  Qeq_bool (qattn " << n << " Aq " << count_all << " " << h << " " << j << " " << i
      << " 0) " << coq_rational(w.value) << " = true.\n"
      << "Proof. split; [|split]; vm_cast_no_check (eq_refl true). Qed.\n\n"
      << "(* At trigger j = " << j << ", head " << h << " puts " << rational_string(w.value)
      << " on BOS at position i = " << i << ". *)\n"
      << "Theorem witness : (forall k d, -1 <= c_witness k d <= 1) /\\\n"
      << "  a " << h << " " << j << " c_witness " << i << " 0 = " << value << " /\\\n"
      << "  " << value << " <> 0.\n"
      << "Proof.\n"
      << "  destruct witness_checked as [K [B E]]. split; [|split].\n"
      << "  - exact (in_box_spec X_witness B).\n"
      << "  - unfold a. etransitivity.\n"
      << "    { apply (witness_bos " << n << " " << nh << " Aq " << count_all << " K " << h << " "
      << j << " c_witness " << i << "). lia. }\n"
      << "    rewrite (Qeq_eqR _ _ (proj1 (Qeq_bool_iff _ _) E)). reflexivity.\n";
  }
  s << "  - unfold Rdiv. apply Rmult_integral_contrapositive_currified.\n"
    << "    + apply not_0_IZR. discriminate.\n"
    << "    + apply Rinv_neq_0_compat, not_0_IZR. discriminate.\n"
    << "Qed.\n\n"
    << "Print Assumptions witness.\n";
  return {s.str(), "witness"};
}

}  // namespace sinkcert::theorems::exact
