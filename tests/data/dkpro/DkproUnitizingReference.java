// Prints Krippendorff's unitizing alpha as DKPro Agreement computes it, for tests/data/dkpro_unitizing_reference.py.
// Input (stdin): a line "raters begin length", then one line per unit "begin length rater category".
// Output: one line per category "category observed expected alpha", then "* observed expected alpha" overall.
// It sits in DKPro's package to read the protected per-category disagreements.
package org.dkpro.statistics.agreement.unitizing;

import java.io.BufferedReader;
import java.io.InputStreamReader;

public class DkproUnitizingReference
{
    public static void main(String[] args) throws Exception
    {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String[] head = in.readLine().trim().split(" ");
        UnitizingAnnotationStudy study = new UnitizingAnnotationStudy(Integer.parseInt(head[0]),
                Long.parseLong(head[1]), Long.parseLong(head[2]));
        String line;
        while ((line = in.readLine()) != null && !line.isBlank()) {
            String[] f = line.trim().split(" ");
            study.addUnit(Long.parseLong(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2]), f[3]);
        }
        KrippendorffAlphaUnitizingAgreement alpha = new KrippendorffAlphaUnitizingAgreement(study);
        for (Object category : study.getCategories()) {
            System.out.println(category + " " + alpha.calculateObservedCategoryDisagreement(category) + " "
                    + alpha.calculateExpectedCategoryDisagreement(category) + " "
                    + alpha.calculateCategoryAgreement(category));
        }
        System.out.println("* " + alpha.calculateObservedDisagreement() + " " + alpha.calculateExpectedDisagreement()
                + " " + alpha.calculateAgreement());
    }
}
