<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use PHPUnit\Framework\TestCase;
use ServicePay\WooCommerce\Money;

final class MoneyTest extends TestCase {

	/** @return array<string,array{0:string,1:string,2:int}> */
	public function amounts(): array {
		return array(
			'naira with kobo'          => array( '1234.5', 'NGN', 123450 ),
			'dollars'                  => array( '25.00', 'USD', 2500 ),
			'no decimals given'        => array( '5000', 'NGN', 500000 ),
			'yen has no minor unit'    => array( '1500', 'JPY', 1500 ),
			'dinar has three decimals' => array( '1.234', 'KWD', 1234 ),
			'trailing zeros beyond'    => array( '19.9900', 'USD', 1999 ),
			'zero'                     => array( '0.00', 'USD', 0 ),
			'a float would round 0.29' => array( '0.29', 'USD', 29 ),
			'large'                    => array( '100000000.00', 'NGN', 10000000000 ),
		);
	}

	/** @dataProvider amounts */
	public function test_to_minor( string $amount, string $currency, int $minor ): void {
		$this->assertSame( $minor, Money::to_minor( $amount, $currency ) );
	}

	public function test_refuses_more_precision_than_the_currency_has(): void {
		$this->expectException( \InvalidArgumentException::class );
		Money::to_minor( '10.005', 'USD' );
	}

	public function test_refuses_what_is_not_an_amount(): void {
		foreach ( array( '-5.00', '1e3', '', 'abc', '1,000.00' ) as $bad ) {
			try {
				Money::to_minor( $bad, 'USD' );
				$this->fail( "accepted $bad" );
			} catch ( \InvalidArgumentException $expected ) {
				$this->assertNotSame( '', $expected->getMessage() );
			}
		}
	}

	public function test_from_minor_for_notes(): void {
		$this->assertSame( '1234.50', Money::from_minor( 123450, 'NGN' ) );
		$this->assertSame( '0.05', Money::from_minor( 5, 'USD' ) );
		$this->assertSame( '1500', Money::from_minor( 1500, 'JPY' ) );
		$this->assertSame( '1.234', Money::from_minor( 1234, 'KWD' ) );
	}
}
